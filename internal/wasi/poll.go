package wasi

import (
	"context"
	"reflect"
	"sync"
	"time"
)

// Pollable is a wasi:io/poll pollable: something that is ready now or will
// be. Changed returns a channel that is closed the next time readiness may
// have changed; Poll re-checks Ready after it fires.
type Pollable interface {
	Ready() bool
	Changed() <-chan struct{}
}

// signal is a broadcast: every waiter holding the current channel wakes on
// the next Notify.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// readyPollable is always ready (files, closed streams).
type readyPollable struct{}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (readyPollable) Ready() bool              { return true }
func (readyPollable) Changed() <-chan struct{} { return closedCh }

// timerPollable is ready once the monotonic deadline has passed.
type timerPollable struct {
	at time.Time
	c  chan struct{}
	o  sync.Once
}

func newTimer(d time.Duration) *timerPollable {
	if d < 0 {
		d = 0
	}
	return &timerPollable{at: time.Now().Add(d)}
}

func (t *timerPollable) Ready() bool { return !time.Now().Before(t.at) }

func (t *timerPollable) Changed() <-chan struct{} {
	t.o.Do(func() {
		t.c = make(chan struct{})
		time.AfterFunc(time.Until(t.at), func() { close(t.c) })
	})
	return t.c
}

// Poll blocks until at least one pollable is ready or ctx ends, and returns
// the indices of the ready ones (wasi:io/poll.poll).
func Poll(ctx context.Context, ps []Pollable) ([]uint32, error) {
	for {
		// Take each pollable's change channel before asking whether it is
		// ready: a change that lands between the two then closes a channel
		// this call holds. Asked the other way round, a change between the
		// check and the subscription notifies nobody, and the wait that
		// follows never ends.
		cases := make([]reflect.SelectCase, 0, len(ps)+1)
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		for _, p := range ps {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.Changed())})
		}
		var ready []uint32
		for i, p := range ps {
			if p.Ready() {
				ready = append(ready, uint32(i))
			}
		}
		if len(ready) > 0 || len(ps) == 0 {
			return ready, nil
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			return nil, ctx.Err()
		}
	}
}

// Block waits until p is ready or ctx ends (pollable.block).
func Block(ctx context.Context, p Pollable) error {
	_, err := Poll(ctx, []Pollable{p})
	return err
}
