package wasi

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// Ctx is one store's WASI state: the policy it runs under, its preopens,
// its standard streams and the table of resources the guest holds. Attach
// one Ctx per store; a Ctx is not shared between stores.
type Ctx struct {
	pol      Policy
	preopens []*Preopen
	stdin    InputStream
	stdout   OutputStream
	stderr   OutputStream
	res      table
	net      *netGuard
	http     *http.Client
	exit     *ExitError
}

// ExitError is returned from a call whose guest invoked wasi:cli/exit.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("guest exited with status %d", e.Code) }

// NewCtx builds a store's WASI context from p: it opens the granted
// directory as "." (creating it when missing, as the spec's scope grant
// does) and the state store as "state".
func NewCtx(p Policy) (*Ctx, error) {
	c := &Ctx{pol: p}
	var ro []string
	for _, e := range p.ReadOnly {
		r, err := cleanRel("filesystem.read_only entry", e)
		if err != nil {
			return nil, err
		}
		ro = append(ro, r)
	}
	if p.Workdir != "" {
		scope, err := cleanRel("filesystem.scope", p.Scope)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(p.Workdir, filepath.FromSlash(scope))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create granted directory %q: %w", dir, err)
		}
		po, err := OpenPreopen(".", dir, scope, ro)
		if err != nil {
			return nil, err
		}
		c.preopens = append(c.preopens, po)
	}
	if p.StateDir != "" {
		if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
			c.Close()
			return nil, fmt.Errorf("create state directory %q: %w", p.StateDir, err)
		}
		po, err := OpenPreopen("state", p.StateDir, "", nil)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.preopens = append(c.preopens, po)
	}
	if p.Stdin != nil {
		c.stdin = newAsyncInput(p.Stdin, nil)
	} else {
		c.stdin = emptyInput{}
	}
	c.stdout = &writerOutput{w: p.Stdout}
	c.stderr = &writerOutput{w: p.Stderr}
	c.net = &netGuard{allow: p.Network, resolved: map[string][]string{}}
	c.http = c.newHTTPClient()
	return c, nil
}

// Policy returns the policy the context was built from.
func (c *Ctx) Policy() Policy { return c.pol }

// Preopens returns the preopened directories in guest order.
func (c *Ctx) Preopens() []*Preopen { return c.preopens }

// Exited reports the status the guest passed to wasi:cli/exit, if any.
func (c *Ctx) Exited() (int, bool) {
	if c.exit == nil {
		return 0, false
	}
	return c.exit.Code, true
}

// Close releases every resource the guest still holds and the preopens.
func (c *Ctx) Close() error {
	var errs []error
	for _, r := range c.res.drain() {
		if cl, ok := r.(interface{ Close() error }); ok {
			errs = append(errs, cl.Close())
		}
	}
	for _, p := range c.preopens {
		errs = append(errs, p.Close())
	}
	// Stops the stdin pump from buffering more; a Read already blocked in
	// the caller's reader returns when that reader does.
	errs = append(errs, c.stdin.Close())
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

// table holds the host objects behind the guest's resource handles. The
// key is the rep the component model carries; 0 is never used.
type table struct {
	mu   sync.Mutex
	next uint32
	m    map[uint32]any
}

func (t *table) add(v any) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[uint32]any{}
	}
	t.next++
	for t.next == 0 || t.m[t.next] != nil {
		t.next++
	}
	t.m[t.next] = v
	return t.next
}

func (t *table) get(rep uint32) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[rep]
	return v, ok
}

func (t *table) remove(rep uint32) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[rep]
	delete(t.m, rep)
	return v, ok
}

func (t *table) drain() []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]any, 0, len(t.m))
	for _, v := range t.m {
		out = append(out, v)
	}
	t.m = nil
	return out
}

// ErrBadHandle is a resource handle the table does not hold, or one of the
// wrong type: a guest bug, which traps.
var ErrBadHandle = errors.New("unknown resource handle")

// lookup fetches rep from c's table as a T.
func lookup[T any](c *Ctx, rep uint32) (T, error) {
	v, ok := c.res.get(rep)
	t, ok2 := v.(T)
	if !ok || !ok2 {
		var zero T
		return zero, fmt.Errorf("handle %d (%T): %w", rep, zero, ErrBadHandle)
	}
	return t, nil
}
