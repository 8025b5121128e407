package wasi

import (
	"context"
	"sync"
	"testing"
	"time"
)

// lateSettle is a pollable whose readiness changes right after its first
// Ready check returns false: the window in which a future settles while
// Poll is between checking and waiting.
type lateSettle struct {
	mu      sync.Mutex
	sig     signal
	done    bool
	checked bool
}

func (p *lateSettle) Ready() bool {
	p.mu.Lock()
	done, first := p.done, !p.checked
	p.checked = true
	p.mu.Unlock()
	if first {
		defer func() {
			p.mu.Lock()
			p.done = true
			p.mu.Unlock()
			p.sig.notify()
		}()
	}
	return done
}

func (p *lateSettle) Changed() <-chan struct{} { return p.sig.wait() }

// TestPollSeesAChangeBetweenCheckAndWait: Poll must not lose a wakeup
// that lands after it found nothing ready and before it waits.
func TestPollSeesAChangeBetweenCheckAndWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ready, err := Poll(ctx, []Pollable{&lateSettle{}})
	if err != nil || len(ready) != 1 {
		t.Fatalf("Poll = %v, %v: the change was lost", ready, err)
	}
}
