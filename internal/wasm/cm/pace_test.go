//go:build cgo

package cm

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestEpochIdlesOutsideGuestCode: with no guest code running the epoch
// advances every idleTick, not every tick.
func TestEpochIdlesOutsideGuestCode(t *testing.T) {
	e := newEngine(t, Config{})
	before := e.pace.ticks.Load()
	time.Sleep(5 * idleTick)
	if n := e.pace.ticks.Load() - before; n > 10 {
		t.Fatalf("%d epoch ticks in %v with no guest code running, want about 5", n, 5*idleTick)
	}
}

// TestDeadlineAfterHostWait: a deadline that passes while the guest waits
// on a host function stops the guest within idleTick's worth of ticks of
// its return, though the epoch moved slowly while it waited.
func TestDeadlineAfterHostWait(t *testing.T) {
	e := newEngine(t, Config{})
	var atReturn int64
	l := e.NewLinker()
	defer l.Close()
	l.Func([]string{"mur:test/host@0.1.0"}, "wait", func(c *Caller, args []Val) (Val, error) {
		time.Sleep(1200 * time.Millisecond)
		atReturn = e.pace.ticks.Load()
		return Val{}, nil
	})
	s := newStore(t, e, Limits{Deadline: time.Second}, nil)
	inst, err := l.Instantiate(context.Background(), s, fixture(t, e, "waitspin.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if err := call(t, inst, context.Background(), "wait-then-spin"); !errors.Is(err, ErrDeadline) {
		t.Fatalf("wait-then-spin: %v, want ErrDeadline", err)
	}
	if n, most := e.pace.ticks.Load()-atReturn, int64(idleTick/time.Millisecond)+20; n > most {
		t.Fatalf("the guest spun %d ticks past a deadline that passed during the host call, want at most %d", n, most)
	}
}
