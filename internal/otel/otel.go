// Package otel exports a session's events as OpenTelemetry spans over
// OTLP/HTTP (observability.otel_endpoint). It is one subscriber of the
// session's event stream, like the trace writer: every record becomes one
// span the moment it is emitted, with session → task → turn → tool call
// parentage, and trace.jsonl stays the complete record.
//
// The session never waits on the collector. Emit decides the span's ids
// and parent under a short lock and hands the event to a bounded queue; a
// worker builds the spans with the official SDK, whose batch processor
// exports them. A full queue or a failed export drops spans, counts them
// and warns once; the session goes on. See docs/otel.md.
package otel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	otelapi "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/murmur/mur/internal/event"
)

// Span names. A scope (session, task, turn) is open from the event that
// starts it to the one that ends it; every other record is a span of its
// own, named by its event type.
const (
	SpanSession = "session"
	SpanTask    = "task"
	SpanTurn    = "turn"
)

// AttrPrefix prefixes every event field copied onto a span.
const AttrPrefix = "murmur."

// Options configure an Exporter.
type Options struct {
	// Endpoint is observability.otel_endpoint: the OTLP/HTTP base URL
	// (http://localhost:4318); spans go to its /v1/traces unless it
	// names a path of its own.
	Endpoint string
	// Warn receives the one warning about dropped spans; nil discards it.
	Warn io.Writer
	// QueueSize bounds the events waiting for the worker; 0 is 4096.
	QueueSize int
	// FlushBudget bounds the wait for the last spans at session_end;
	// 0 is 2 s. Only an endpoint that has answered (its address took a
	// connection) is waited for.
	FlushBudget time.Duration
	// SpoolDir (SpoolDir(MURMUR_HOME)) keeps the spans not delivered when
	// the session ends, for the next session that reaches the endpoint;
	// "" drops and counts them.
	SpoolDir string
	// Exporter replaces the OTLP exporter (tests); nil builds one.
	Exporter sdktrace.SpanExporter
}

// Exporter is an event.Sink that turns a session's records into spans.
type Exporter struct {
	opts  Options
	queue chan item
	done  chan struct{}
	state state // ids and parentage, decided in Emit's order

	mu      sync.Mutex // guards ended
	ended   bool
	dropped atomic.Int64
	failed  atomic.Bool
	// reached says the endpoint has answered: the probe connected. A
	// blackholed one never does, and the session's end does not wait on
	// it.
	reached atomic.Bool
	// probed is closed once the probe has its answer.
	probed chan struct{}
	// relay holds the spans until they are delivered (nil with an
	// Options.Exporter of the caller's own).
	relay *relay
	// warnMu orders the one warning with the session's end: no warning is
	// written once finish has returned (the endpoint probe runs on its own
	// goroutine and may fail after the session ended).
	warnMu   sync.Mutex
	warned   bool
	silenced bool
	exp      sdktrace.SpanExporter
	tp       atomic.Pointer[sdktrace.TracerProvider] // made at the first record
	tracer   trace.Tracer
}

// item is one event for the worker, with the span it becomes.
type item struct {
	e      event.Event
	fields map[string]any
	kind   kind
	sc     trace.SpanContext // the span's own ids
	parent trace.SpanContext
	link   trace.SpanContext // the session, for a task under a remote parent
	closes []trace.SpanID    // scopes this event ends (a turn, then its task)
}

type kind uint8

const (
	kindLeaf kind = iota
	kindSessionStart
	kindSessionEnd
	kindTaskStart
	kindTaskEnd
	kindTurn
)

// New returns an Exporter for opts.Endpoint. It fails only on an endpoint
// that is not an http or https URL; a collector that is down is found out
// later, by the exports, and never fails the session.
func New(opts Options) (*Exporter, error) {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.FlushBudget <= 0 {
		opts.FlushBudget = 2 * time.Second
	}
	if opts.Warn == nil {
		opts.Warn = io.Discard
	}
	exp := opts.Exporter
	var probe string
	var rl *relay
	if exp == nil {
		u, err := TracesURL(opts.Endpoint)
		if err != nil {
			return nil, err
		}
		probe = hostPort(u)
		// No retries: a batch that cannot be sent now waits in the relay
		// for a later one, or for the spool, so a down collector never
		// holds the session.
		inner := otlptracehttp.NewClient(
			otlptracehttp.WithEndpointURL(u),
			otlptracehttp.WithTimeout(5*time.Second),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		if err := inner.Start(context.Background()); err != nil {
			return nil, fmt.Errorf("otel: %w", err)
		}
		rl = newRelay(inner, newSpool(opts.SpoolDir, u))
		exp = otlptrace.NewUnstarted(rl)
	}
	// The SDK reports failed exports to a process-wide handler that
	// logs to stderr each time; the exporter counts them and warns once.
	quiet.Do(func() { otelapi.SetErrorHandler(otelapi.ErrorHandlerFunc(func(error) {})) })
	x := &Exporter{opts: opts, exp: exp, queue: make(chan item, opts.QueueSize), done: make(chan struct{}),
		probed: make(chan struct{}), relay: rl}
	x.state.init()
	if probe == "" {
		x.reached.Store(true) // an exporter of the caller's own
		close(x.probed)
	}
	go x.work()
	if rl != nil {
		rl.x = x
		go rl.run()
		// Found down now, the spans wait for the spool; the session's
		// end never waits for the answer.
		go func() {
			defer close(x.probed)
			c, err := net.DialTimeout("tcp", probe, 2*time.Second)
			if err != nil {
				x.failed.Store(true)
				rl.note(err)
				return
			}
			x.reached.Store(true)
			c.Close()
		}()
	}
	return x, nil
}

// hostPort is the address a traces URL connects to.
func hostPort(traces string) string {
	u, err := url.Parse(traces)
	if err != nil {
		return ""
	}
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

var quiet sync.Once

// TracesURL is the OTLP/HTTP traces URL of an otel_endpoint: its base with
// /v1/traces, or the URL as given when it names a path.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otel: observability.otel_endpoint %q is not an http:// or https:// URL (for example http://localhost:4318)", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Emit takes one event of the session's stream. Live events are not
// records and make no span. It never blocks: a full queue drops the span.
func (x *Exporter) Emit(e event.Event) {
	if e.Live {
		return
	}
	it, ok := x.state.place(e)
	if !ok {
		return
	}
	// Fields belong to the emitter once Emit returns: keep a copy.
	it.fields = make(map[string]any, len(e.Fields))
	for k, v := range e.Fields {
		it.fields[k] = v
	}
	it.e.Fields = nil
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return
	}
	select {
	case x.queue <- it:
	default:
		x.drop(1, "the export queue is full")
	}
	if it.kind == kindSessionEnd {
		x.ended = true
		close(x.queue)
	}
	x.mu.Unlock()
	if it.kind == kindSessionEnd {
		x.finish()
	}
}

// finish builds the last spans and hands them to the relay (both in
// process), then waits for their delivery within the flush budget only
// when the endpoint has answered. Whatever is not delivered then goes to
// the spool: a refused or blackholed endpoint costs the session's end no
// wait at all (bench_test.go, BenchmarkSessionEndpointDown).
func (x *Exporter) finish() {
	if x.relay == nil {
		ctx, cancel := context.WithTimeout(context.Background(), x.opts.FlushBudget)
		defer cancel()
		select {
		case <-x.done:
		case <-ctx.Done():
		}
		if tp := x.tp.Load(); tp != nil {
			tp.Shutdown(ctx)
		} else {
			x.exp.Shutdown(ctx)
		}
		x.silence()
		return
	}
	<-x.done
	// The relay takes every batch at once: this is the SDK's work only.
	if tp := x.tp.Load(); tp != nil {
		tp.Shutdown(context.Background())
	}
	if x.reached.Load() {
		x.relay.drain(x.opts.FlushBudget)
	}
	x.relay.stop()
	x.relay.keep()
	x.silence()
}

func (x *Exporter) silence() {
	x.warnMu.Lock()
	x.silenced = true
	x.warnMu.Unlock()
}

// provider makes the SDK's tracer provider for the session that e starts:
// the service is the capsule (session_start's capsule, else mur), the
// instance the session id.
func (x *Exporter) provider(e event.Event, f map[string]any) {
	name, _ := f["capsule"].(string)
	if name == "" {
		name = "mur"
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	if id, _ := f["session_id"].(string); id != "" && e.Type == "session_start" {
		attrs = append(attrs, semconv.ServiceInstanceID(id))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(givenIDs{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		// The worker may block on a full batch queue: it is off the
		// session's path, and its own queue is the bounded one.
		sdktrace.WithBatcher(x.batchExporter(), sdktrace.WithBlocking(), sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
	)
	x.tracer = tp.Tracer("github.com/murmur/mur/internal/otel")
	x.tp.Store(tp)
}

// Close ends the exporter when the session never reached session_end (it
// failed while opening): open spans are dropped. Safe after session_end.
func (x *Exporter) Close() {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return
	}
	x.ended = true
	close(x.queue)
	x.mu.Unlock()
	x.finish()
}

// Dropped is how many spans were dropped: queue full or export failed.
func (x *Exporter) Dropped() int64 { return x.dropped.Load() }

func (x *Exporter) drop(n int, why string) {
	x.dropped.Add(int64(n))
	x.warnMu.Lock()
	defer x.warnMu.Unlock()
	if !x.warned && !x.silenced {
		x.warned = true
		fmt.Fprintf(x.opts.Warn, "mur: OpenTelemetry: %s; spans are being dropped and counted, trace.jsonl is complete (observability.otel_endpoint %s)\n", why, x.opts.Endpoint)
	}
}

// warnf writes a warning unless the session has ended.
func (x *Exporter) warnf(format string, args ...any) {
	x.warnMu.Lock()
	defer x.warnMu.Unlock()
	if !x.silenced {
		fmt.Fprintf(x.opts.Warn, format, args...)
	}
}

// counting wraps the exporter so a failed export is counted as dropped
// spans and warned about once.
type counting struct {
	sdktrace.SpanExporter
	x *Exporter
}

func (c *counting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if c.x.failed.Load() {
		// The endpoint failed before: try again, but do not let a
		// hanging collector hold the worker for the full timeout twice.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Second)
		defer cancel()
	}
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		c.x.failed.Store(true)
		c.x.drop(len(spans), "export failed: "+err.Error())
	}
	return err
}

// batchExporter is what the SDK's batch processor exports to: the relay's
// exporter, which never fails or blocks, or a caller's own, counted.
func (x *Exporter) batchExporter() sdktrace.SpanExporter {
	if x.relay != nil {
		return x.exp
	}
	return &counting{SpanExporter: x.exp, x: x}
}

// work builds the spans, in emission order.
func (x *Exporter) work() {
	defer close(x.done)
	open := map[trace.SpanID]trace.Span{}
	for it := range x.queue {
		x.build(it, open)
	}
	// A session that never ended (it failed while opening) leaves its
	// scopes open; end them so they are not lost.
	for _, s := range open {
		s.End()
	}
}

func (x *Exporter) build(it item, open map[trace.SpanID]trace.Span) {
	e := it.e
	if x.tracer == nil {
		x.provider(e, it.fields)
	}
	attrs := attributes(e.Type, it.fields)
	start, end := e.Time, e.Time
	if d, ok := durationMS(it.fields); ok && it.kind != kindSessionEnd && it.kind != kindTaskEnd {
		start = e.Time.Add(-d)
	}
	// A turn ends where the next one starts; a task's turn with the task.
	for _, id := range it.closes {
		if s := open[id]; s != nil {
			s.End(trace.WithTimestamp(start))
			delete(open, id)
		}
	}
	switch it.kind {
	case kindSessionEnd, kindTaskEnd:
		s := open[it.sc.SpanID()]
		if s == nil {
			return
		}
		s.SetAttributes(attrs[1:]...) // the span keeps its starting murmur.event
		status(s, e.Type, it.fields)
		s.End(trace.WithTimestamp(e.Time))
		delete(open, it.sc.SpanID())
		return
	}
	name := e.Type
	switch it.kind {
	case kindSessionStart:
		name = SpanSession
	case kindTaskStart:
		name = SpanTask
	case kindTurn:
		name = SpanTurn
	}
	ctx := context.WithValue(context.Background(), idKey{}, it.sc)
	if it.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, it.parent)
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(start), trace.WithAttributes(attrs...)}
	if it.link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: it.link}))
	}
	if !it.parent.IsValid() {
		opts = append(opts, trace.WithNewRoot())
	}
	_, s := x.tracer.Start(ctx, name, opts...)
	status(s, e.Type, it.fields)
	switch it.kind {
	case kindSessionStart, kindTaskStart, kindTurn:
		open[it.sc.SpanID()] = s
	default:
		s.End(trace.WithTimestamp(end))
	}
}

// status marks the spans of what went wrong: a failed tool call, a task or
// session that did not end ok, a failed inference, task_failed.
func status(s trace.Span, typ string, f map[string]any) {
	str := func(k string) string { v, _ := f[k].(string); return v }
	switch {
	case typ == "task_failed":
		s.SetStatus(codes.Error, str("reason"))
	case typ == "tool_call" && str("status") != "" && str("status") != "passed":
		s.SetStatus(codes.Error, str("error"))
	case (typ == "task_end" || typ == "session_end") && exitStatus(f) != "" && exitStatus(f) != "ok":
		s.SetStatus(codes.Error, exitStatus(f))
	case typ == "inference" && str("error") != "":
		s.SetStatus(codes.Error, str("error"))
	}
}

func exitStatus(f map[string]any) string { return fmt.Sprint(valueOr(f["exit_status"], "")) }

func valueOr(v any, d any) any {
	if v == nil {
		return d
	}
	return v
}

func durationMS(f map[string]any) (time.Duration, bool) {
	switch v := f["duration_ms"].(type) {
	case int64:
		return time.Duration(v) * time.Millisecond, true
	case int:
		return time.Duration(v) * time.Millisecond, true
	case float64:
		return time.Duration(v * float64(time.Millisecond)), true
	}
	return 0, false
}

// attributes copies an event's fields onto its span: murmur.event and
// murmur.<field> for each field (a nested value as its JSON), plus the
// OpenTelemetry GenAI names for the model, tokens and tool.
func attributes(typ string, f map[string]any) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(f)+4)
	out = append(out, attribute.String(AttrPrefix+"event", typ))
	for k, v := range f {
		out = append(out, value(AttrPrefix+k, v))
	}
	str := func(k string) (string, bool) { v, ok := f[k].(string); return v, ok && v != "" }
	num := func(k string) (int64, bool) {
		switch v := f[k].(type) {
		case int:
			return int64(v), true
		case int64:
			return v, true
		}
		return 0, false
	}
	if m, ok := str("model"); ok {
		out = append(out, semconv.GenAIRequestModel(m))
	}
	if typ == "inference" {
		if n, ok := num("input_tokens"); ok {
			out = append(out, semconv.GenAIUsageInputTokens(int(n)))
		}
		if n, ok := num("output_tokens"); ok {
			out = append(out, semconv.GenAIUsageOutputTokens(int(n)))
		}
	}
	if typ == "tool_call" {
		if t, ok := str("tool"); ok {
			out = append(out, semconv.GenAIToolName(t))
		}
		if c, ok := str("call_id"); ok {
			out = append(out, semconv.GenAIToolCallID(c))
		}
	}
	return out
}

func value(k string, v any) attribute.KeyValue {
	switch v := v.(type) {
	case string:
		return attribute.String(k, v)
	case bool:
		return attribute.Bool(k, v)
	case int:
		return attribute.Int(k, v)
	case int64:
		return attribute.Int64(k, v)
	case int32:
		return attribute.Int64(k, int64(v))
	case uint64:
		return attribute.Int64(k, int64(v))
	case float64:
		return attribute.Float64(k, v)
	case []string:
		return attribute.StringSlice(k, v)
	case fmt.Stringer:
		return attribute.String(k, v.String())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return attribute.String(k, fmt.Sprint(v))
	}
	return attribute.String(k, string(b))
}

// idKey carries the ids Emit chose to the SDK's id generator.
type idKey struct{}

// givenIDs is an sdktrace.IDGenerator that returns the ids Emit decided,
// so parentage is settled in emission order and Traceparent can answer
// before the worker has built the span.
type givenIDs struct{}

func (givenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	sc, _ := ctx.Value(idKey{}).(trace.SpanContext)
	return sc.TraceID(), sc.SpanID()
}

func (givenIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	sc, _ := ctx.Value(idKey{}).(trace.SpanContext)
	return sc.SpanID()
}

// traceContext reads and writes W3C traceparent headers.
var traceContext = propagation.TraceContext{}

// Subscribe attaches an Exporter for endpoint to a session's stream; ""
// attaches nothing. An endpoint that is not a URL is reported on warn and
// exports nothing: telemetry never stops a session.
//
// spoolDir (SpoolDir(MURMUR_HOME)) keeps the spans the session could not
// deliver for the next session that reaches the endpoint.
func Subscribe(s *event.Stream, endpoint string, warn io.Writer, spoolDir string) *Exporter {
	if strings.TrimSpace(endpoint) == "" {
		return nil
	}
	x, err := New(Options{Endpoint: endpoint, Warn: warn, SpoolDir: spoolDir})
	if err != nil {
		if warn != nil {
			fmt.Fprintf(warn, "mur: %v; no spans are exported\n", err)
		}
		return nil
	}
	s.Add(x)
	return x
}
