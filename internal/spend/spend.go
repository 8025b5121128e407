// Package spend enforces the spend ceilings: inference.max_session_tokens,
// a per-session ceiling held in memory, and spend.machine_tokens_per_day,
// a meter shared by every run on the machine through a locked file under
// ~/.murmur, so it survives restarts and counts concurrent runs.
//
// Both admit a call before it is sent: what earlier calls were charged,
// plus what calls in flight reserved, plus the call's input and its whole
// output cap, must fit under the ceiling. The call then settles its
// reservation with what it was actually charged.
package spend

import (
	"errors"
	"fmt"
	"sync"
)

// ErrCeiling is the kind of every refusal.
var ErrCeiling = errors.New("spend ceiling reached")

// Session and machine limit names, as the refusal names them.
const (
	LimitSession = "inference.max_session_tokens"
	LimitMachine = "spend.machine_tokens_per_day"
)

// Refusal says why a call was not admitted. It is an error wrapping
// ErrCeiling.
type Refusal struct {
	Limit   string // LimitSession or LimitMachine
	Ceiling int64
	Used    int64 // charged plus reserved in flight
	Needed  int64 // the call's input plus its output cap
	// Latched is true when an earlier refusal in this session refused the
	// call, not the arithmetic.
	Latched bool
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("spend ceiling reached: %s is %d tokens, %d used, the next call needs %d; retrying will not get past it",
		r.Limit, r.Ceiling, r.Used, r.Needed)
}

func (r *Refusal) Unwrap() error { return ErrCeiling }

// Admitter is one ceiling.
type Admitter interface {
	// Admit reserves need tokens or refuses with a *Refusal.
	Admit(need int64) (Reservation, error)
}

// Reservation is an admitted call's hold on a ceiling.
type Reservation interface {
	// Settle replaces the reservation with what the call was charged.
	Settle(charged int64) error
}

// SessionCeiling is inference.max_session_tokens for one session. The
// first refusal latches: every later call is refused without arithmetic,
// so a smaller call cannot slip in after a larger one was stopped.
type SessionCeiling struct {
	mu       sync.Mutex
	limit    int64
	charged  int64
	reserved int64
	latch    *Refusal
}

// NewSessionCeiling returns a ceiling of limit tokens.
func NewSessionCeiling(limit int64) *SessionCeiling { return &SessionCeiling{limit: limit} }

// Admit implements Admitter.
func (c *SessionCeiling) Admit(need int64) (Reservation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latch != nil {
		r := *c.latch
		r.Latched = true
		r.Used = c.charged + c.reserved
		r.Needed = need
		return nil, &r
	}
	used := c.charged + c.reserved
	if used+need > c.limit {
		c.latch = &Refusal{Limit: LimitSession, Ceiling: c.limit, Used: used, Needed: need}
		r := *c.latch
		return nil, &r
	}
	c.reserved += need
	return &sessionRes{c: c, held: need}, nil
}

// Latch refuses every later call, as a refusal by another ceiling does
// (the machine meter's refusal ends the session's inference too).
func (c *SessionCeiling) Latch(r *Refusal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latch == nil {
		c.latch = r
	}
}

// Used returns what has been charged so far.
func (c *SessionCeiling) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.charged
}

type sessionRes struct {
	c    *SessionCeiling
	held int64
	done bool
}

func (r *sessionRes) Settle(charged int64) error {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	r.c.reserved -= r.held
	r.c.charged += charged
	return nil
}

// Admit admits need against every ceiling, in order; a refusal by one
// releases what the earlier ones reserved.
func Admit(need int64, ceilings ...Admitter) (Reservation, error) {
	var held multi
	for _, c := range ceilings {
		r, err := c.Admit(need)
		if err != nil {
			// A release that fails is reported with the refusal; its
			// reservation lapses when this process ends.
			errs := []error{err}
			for _, h := range held {
				errs = append(errs, h.Settle(0))
			}
			return nil, errors.Join(errs...)
		}
		held = append(held, r)
	}
	return held, nil
}

type multi []Reservation

func (m multi) Settle(charged int64) error {
	var errs []error
	for _, r := range m {
		errs = append(errs, r.Settle(charged))
	}
	return errors.Join(errs...)
}
