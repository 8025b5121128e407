package otel

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// maxHeld bounds the spans a relay holds for an endpoint that has not
// taken them yet; more are dropped and counted.
const maxHeld = 16384

// relay is the otlptrace.Client the SDK's exporter uploads to. It takes
// every batch at once and holds it until its own goroutine has delivered
// it to the endpoint (the OTLP/HTTP client), so neither the SDK nor the
// session's end ever waits on the network: at the end, what is still held
// goes to the spool. Once the endpoint has answered, the relay first sends
// what earlier sessions spooled for it.
type relay struct {
	x     *Exporter
	inner otlptrace.Client
	spool *spool // nil: undelivered spans are dropped and counted

	wake     chan struct{} // a batch came in
	progress chan struct{} // a send ended
	ctx      context.Context
	cancel   context.CancelFunc
	stopped  chan struct{}
	uploads  atomic.Int64 // send attempts, for tests

	mu        sync.Mutex
	pending   []*tracepb.ResourceSpans
	held      int // spans in pending and in flight
	inflight  bool
	spoolDone bool      // earlier sessions' spool is sent or carried
	started   bool      // run is sending: stop waits for it
	closed    bool      // stop was called: run sends nothing
	carried   []spooled // claimed spool files not delivered
	bad       []string  // spool files that could not be read
	lastErr   error
}

func newRelay(inner otlptrace.Client, sp *spool) *relay {
	r := &relay{inner: inner, spool: sp, wake: make(chan struct{}, 1), progress: make(chan struct{}, 1), stopped: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

func (r *relay) Start(context.Context) error { return nil }
func (r *relay) Stop(context.Context) error  { return nil }

// UploadTraces holds rs for the relay's goroutine and returns at once.
func (r *relay) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	n := countSpans(rs)
	r.mu.Lock()
	over := r.held+n > maxHeld
	if !over {
		r.pending = append(r.pending, rs...)
		r.held += n
	}
	r.mu.Unlock()
	if over {
		r.x.drop(n, fmt.Sprintf("more than %d spans are waiting for the endpoint", maxHeld))
		return nil
	}
	signal(r.wake)
	return nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// note keeps why the endpoint did not take spans, for the end's warning.
func (r *relay) note(err error) {
	r.mu.Lock()
	r.lastErr = err
	r.mu.Unlock()
}

// run delivers: nothing until the endpoint has answered the probe, then
// the spool's files, oldest first, then each batch as it comes.
func (r *relay) run() {
	defer close(r.stopped)
	select {
	case <-r.x.probed:
	case <-r.ctx.Done():
		return
	}
	r.mu.Lock()
	if r.closed || !r.x.reached.Load() {
		r.mu.Unlock()
		return // everything waits for the spool
	}
	r.started = true
	r.mu.Unlock()
	r.sendSpool()
	for {
		r.send()
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return
		}
	}
}

// sendSpool sends what earlier sessions spooled for this endpoint, one
// file per request; a file is removed once the endpoint took it, and one
// it did not take is carried to this session's own spool file.
func (r *relay) sendSpool() {
	defer func() {
		r.mu.Lock()
		r.spoolDone = true
		r.mu.Unlock()
		signal(r.progress)
	}()
	if r.spool == nil {
		return
	}
	files, bad := r.spool.claim()
	r.mu.Lock()
	r.bad = bad
	r.mu.Unlock()
	for i, f := range files {
		var err error
		if err = r.ctx.Err(); err == nil {
			r.uploads.Add(1)
			err = r.inner.UploadTraces(r.ctx, f.rs)
		}
		if err != nil {
			r.mu.Lock()
			r.carried = append(r.carried, files[i:]...)
			r.lastErr = err
			r.mu.Unlock()
			return
		}
		os.Remove(f.path)
	}
}

// send delivers the held batches until none is left or one fails (it is
// held again, for the next batch's attempt or the spool).
func (r *relay) send() {
	for {
		r.mu.Lock()
		batch := r.pending
		if len(batch) == 0 {
			r.mu.Unlock()
			signal(r.progress)
			return
		}
		r.pending, r.inflight = nil, true
		r.mu.Unlock()
		r.uploads.Add(1)
		err := r.inner.UploadTraces(r.ctx, batch)
		r.mu.Lock()
		r.inflight = false
		if err != nil {
			r.pending = append(batch, r.pending...)
			r.lastErr = err
		} else {
			r.held -= countSpans(batch)
		}
		r.mu.Unlock()
		signal(r.progress)
		if err != nil {
			return
		}
	}
}

// drain waits, at most budget, until everything held and spooled before
// has been delivered. Only for an endpoint that has answered.
func (r *relay) drain(budget time.Duration) {
	signal(r.wake)
	t := time.NewTimer(budget)
	defer t.Stop()
	for {
		r.mu.Lock()
		idle := r.spoolDone && len(r.pending) == 0 && !r.inflight
		r.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-r.progress:
		case <-t.C:
			return
		}
	}
}

// stop ends the relay's goroutine, abandoning a request in flight (its
// batch is held again), and waits for it when it has started sending (an
// HTTP request ends at once when its context is canceled); one that has
// not is not waited for, and will send nothing.
func (r *relay) stop() {
	r.mu.Lock()
	r.closed = true
	started := r.started
	r.mu.Unlock()
	r.cancel()
	if started {
		<-r.stopped
	}
}

// keep writes every span not delivered (the spool files carried, then the
// session's own) to one new spool file and says so in one warning; with
// no spool they are dropped and counted.
func (r *relay) keep() {
	r.mu.Lock()
	own, carried, bad, why := r.pending, r.carried, r.bad, r.lastErr
	r.pending, r.carried, r.held = nil, nil, 0
	r.mu.Unlock()
	reason := "it had not answered when the session ended"
	if why != nil {
		reason = why.Error()
	}
	var all []*tracepb.ResourceSpans
	for _, f := range carried {
		all = append(all, f.rs...)
	}
	all = append(all, own...)
	n := countSpans(all)
	if len(bad) > 0 {
		r.x.warnf("mur: OpenTelemetry: spool files that could not be read were set aside: %s\n", strings.Join(bad, ", "))
	}
	if n == 0 {
		return
	}
	if r.spool == nil {
		r.x.drop(n, "the endpoint did not take the spans before the session ended: "+reason)
		return
	}
	path, dropped, removed, err := r.spool.write(all)
	if err != nil {
		for _, f := range carried {
			r.spool.unclaim(f)
		}
		r.x.drop(countSpans(own), "the spans not delivered could not be spooled: "+err.Error())
		return
	}
	for _, f := range carried {
		os.Remove(f.path)
	}
	r.x.dropped.Add(int64(dropped))
	msg := fmt.Sprintf("mur: OpenTelemetry: %d spans were not delivered to observability.otel_endpoint %s (%s); they are kept in %s and the next session that reaches the endpoint sends them first", n-dropped, r.x.opts.Endpoint, reason, path)
	if dropped > 0 {
		msg += fmt.Sprintf("; %d older spans were dropped to keep the file under %d MiB", dropped, maxSpoolFile>>20)
	}
	if len(removed) > 0 {
		msg += fmt.Sprintf("; the spool's oldest files were removed to keep it under %d MiB: %s", maxSpoolDir>>20, strings.Join(removed, ", "))
	}
	r.x.warnf("%s\n", msg)
}
