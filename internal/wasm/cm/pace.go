//go:build cgo

package cm

import (
	"sync/atomic"
	"time"
)

// pacer decides how fast the engine's epoch advances. The epoch only has
// to move while guest code runs: deadlines and cancellation interrupt a
// running guest, and a guest blocked in a host function is the host's to
// stop. A 1 ms ticker for the engine's whole life woke a capsule waiting
// on its model a thousand times a second (3–3.7 % of a core per waiting
// capsule in bench/launchbench -fleet, nearly all scheduler wake/park).
// Outside guest code the epoch still advances every idleTick, so wasm that
// wasmtime runs outside a call (a destructor at a store's end) keeps a
// deadline, coarser.
type pacer struct {
	running atomic.Int64  // calls into guest code now executing it
	idle    atomic.Bool   // the ticker waits idleTick
	wake    chan struct{} // guest code began while the ticker idled
	ticks   atomic.Int64  // epoch increments, for tests
}

const idleTick = 100 * time.Millisecond

func newPacer() *pacer { return &pacer{wake: make(chan struct{}, 1)} }

// guestRuns marks guest code executing from now on.
func (p *pacer) guestRuns() {
	// Only an idling ticker is woken: a guest back from a short host call
	// finds it still on the fast tick, so a call costs no goroutine wake.
	// running is written before idle is read, and run writes idle before
	// reading running, so one of the two always sees the other.
	if p.running.Add(1) == 1 && p.idle.Load() {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// guestWaits marks the end of guest code executing: the call returned or
// the guest called into the host.
func (p *pacer) guestWaits() { p.running.Add(-1) }

// run advances the epoch with increment until stop closes: every tick
// while guest code runs, every idleTick otherwise.
func (p *pacer) run(tick time.Duration, increment func(), stop <-chan struct{}) {
	t := time.NewTimer(tick)
	defer t.Stop()
	for {
		every := tick
		if p.running.Load() == 0 {
			p.idle.Store(true)
			if p.running.Load() == 0 {
				every = idleTick
			}
		}
		t.Reset(every)
		select {
		case <-t.C:
			increment()
			p.ticks.Add(1)
		case <-p.wake:
			// Guest code began: back to the fast tick at once.
		case <-stop:
			return
		}
		p.idle.Store(false)
	}
}
