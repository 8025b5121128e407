package otel

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/murmur/mur/internal/event"
)

// session emits the records of one session with one task of two turns, as
// the agent loop and capsule emit them.
func session(s *event.Stream, taskID string) {
	t0 := time.Now().UTC()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s.Emit(event.Event{Type: "session_start", Time: at(0), Fields: map[string]any{"session_id": "ses_1", "capsule": "acme/demo", "model": "m-1", "tools": []string{"read", "write"}}})
	s.Emit(event.Event{Type: "task_start", Time: at(1), Fields: map[string]any{"task_id": taskID, "origin": "cli"}})
	s.Emit(event.Event{Type: event.TextDelta, Live: true, Time: at(2), Fields: map[string]any{"task_id": taskID, "text": "hi"}})
	s.Emit(event.Event{Type: "inference", Time: at(50), Fields: map[string]any{"task_id": taskID, "turn": 1, "model": "m-1", "input_tokens": 120, "output_tokens": 7, "duration_ms": int64(40)}})
	s.Emit(event.Event{Type: "tool_call", Time: at(60), Fields: map[string]any{"task_id": taskID, "turn": 1, "tool": "read", "call_id": "c1", "status": "failed", "error": "no such file", "duration_ms": int64(5)}})
	s.Emit(event.Event{Type: "inference_retry", Time: at(70), Fields: map[string]any{"task_id": taskID, "turn": 2, "attempt": 1, "http_status": 503}})
	s.Emit(event.Event{Type: "inference", Time: at(100), Fields: map[string]any{"task_id": taskID, "turn": 2, "model": "m-1", "input_tokens": 140, "output_tokens": 9, "duration_ms": int64(20)}})
	s.Emit(event.Event{Type: "task_end", Time: at(101), Fields: map[string]any{"task_id": taskID, "exit_status": "ok", "turns": 2}})
	s.Emit(event.Event{Type: "session_end", Time: at(102), Fields: map[string]any{"session_id": "ses_1", "exit_status": "failed"}})
}

// memory keeps its spans past Shutdown (the SDK's in-memory exporter
// clears them there, and session_end shuts the provider down).
type memory struct{ *tracetest.InMemoryExporter }

func (memory) Shutdown(context.Context) error { return nil }

func newMemory() memory { return memory{tracetest.NewInMemoryExporter()} }

func byName(spans tracetest.SpanStubs) map[string][]tracetest.SpanStub {
	m := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		m[s.Name] = append(m[s.Name], s)
	}
	return m
}

func attr(s tracetest.SpanStub, k string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == k {
			return a.Value.String()
		}
	}
	return ""
}

func TestSpansFollowTheSession(t *testing.T) {
	mem := newMemory()
	var s event.Stream
	x, err := New(Options{Exporter: mem})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(x)
	session(&s, "tsk_a")
	// session_end flushed: every span is exported by the time Emit returns.
	got := byName(mem.GetSpans())
	want := map[string]int{SpanSession: 1, SpanTask: 1, SpanTurn: 2, "tool_call": 1, "inference_retry": 1}
	for name, n := range want {
		if len(got[name]) != n {
			t.Fatalf("%d %q spans, want %d (all: %v)", len(got[name]), name, n, mem.GetSpans().Snapshots())
		}
	}
	if len(mem.GetSpans()) != 6 {
		t.Fatalf("%d spans, want 6 (a live event makes none)", len(mem.GetSpans()))
	}
	sess, task := got[SpanSession][0], got[SpanTask][0]
	turn1, turn2 := got[SpanTurn][0], got[SpanTurn][1]
	if attr(turn1, "murmur.turn") != "1" {
		turn1, turn2 = turn2, turn1
	}
	tool, retry := got["tool_call"][0], got["inference_retry"][0]
	parent := func(child, p tracetest.SpanStub) {
		t.Helper()
		if child.Parent.SpanID() != p.SpanContext.SpanID() || child.SpanContext.TraceID() != sess.SpanContext.TraceID() {
			t.Fatalf("%s's parent is %v, want %s %v", child.Name, child.Parent.SpanID(), p.Name, p.SpanContext.SpanID())
		}
	}
	if sess.Parent.IsValid() {
		t.Fatal("the session span has a parent")
	}
	parent(task, sess)
	parent(turn1, task)
	parent(turn2, task)
	parent(tool, turn1)
	parent(retry, task) // a retry of turn 2 comes before turn 2's record
	// Attributes: the event's fields, and the GenAI names.
	for k, v := range map[string]string{"murmur.event": "tool_call", "murmur.tool": "read", "gen_ai.tool.name": "read", "gen_ai.tool.call.id": "c1", "murmur.status": "failed"} {
		if attr(tool, k) != v {
			t.Errorf("tool_call %s = %q, want %q", k, attr(tool, k), v)
		}
	}
	if attr(turn1, "gen_ai.usage.input_tokens") != "120" || attr(turn1, "gen_ai.request.model") != "m-1" {
		t.Errorf("turn attributes %v", turn1.Attributes)
	}
	if attr(sess, "murmur.capsule") != "acme/demo" || attr(sess, "murmur.exit_status") != "failed" || attr(sess, "murmur.tools") != `["read","write"]` || attr(sess, "murmur.event") != "session_start" {
		t.Errorf("session attributes %v", sess.Attributes)
	}
	// Durations: a turn and a tool call start duration_ms before their record.
	if d := tool.EndTime.Sub(tool.StartTime); d != 5*time.Millisecond {
		t.Errorf("tool_call lasts %v, want 5ms", d)
	}
	if !turn1.EndTime.Equal(turn2.StartTime) || turn2.EndTime.Sub(turn2.StartTime) != 21*time.Millisecond {
		t.Errorf("turn 1 ends %v, turn 2 runs %v..%v: a turn ends where the next starts, the last with its task", turn1.EndTime, turn2.StartTime, turn2.EndTime)
	}
	if !task.EndTime.After(turn2.StartTime) || !sess.EndTime.After(task.EndTime) {
		t.Errorf("scopes end out of order: task %v session %v", task.EndTime, sess.EndTime)
	}
	if tool.Status.Code.String() != "Error" || sess.Status.Code.String() != "Error" || task.Status.Code.String() != "Unset" {
		t.Errorf("status: tool %v session %v task %v", tool.Status, sess.Status, task.Status)
	}
}

func TestAdoptedTraceparentJoinsTheTrace(t *testing.T) {
	const remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	const remoteSpan = "00f067aa0ba902b7"
	if err := Adopt("tsk_door", "00-"+remoteTrace+"-"+remoteSpan+"-01", ""); err != nil {
		t.Fatal(err)
	}
	mem := newMemory()
	var s event.Stream
	x, err := New(Options{Exporter: mem})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(x)
	var during string
	s.Add(event.SinkFunc(func(e event.Event) {
		if e.Type == "tool_call" {
			during = Traceparent("tsk_door")
		}
	}))
	session(&s, "tsk_door")
	task := byName(mem.GetSpans())[SpanTask][0]
	if task.SpanContext.TraceID().String() != remoteTrace || task.Parent.SpanID().String() != remoteSpan || !task.Parent.IsRemote() {
		t.Fatalf("task span %v parent %v, want trace %s parent %s", task.SpanContext, task.Parent, remoteTrace, remoteSpan)
	}
	sess := byName(mem.GetSpans())[SpanSession][0]
	if len(task.Links) != 1 || task.Links[0].SpanContext.SpanID() != sess.SpanContext.SpanID() {
		t.Fatalf("task links %v, want the session span", task.Links)
	}
	var turn1 tracetest.SpanStub
	for _, sp := range byName(mem.GetSpans())[SpanTurn] {
		if attr(sp, "murmur.turn") == "1" {
			turn1 = sp
		}
	}
	want := "00-" + remoteTrace + "-" + turn1.SpanContext.SpanID().String() + "-01"
	if during != want {
		t.Fatalf("Traceparent during the tool call = %q, want %q (turn 1)", during, want)
	}
	if Traceparent("tsk_door") != "" {
		t.Fatal("Traceparent of an ended task is not empty")
	}
}

func TestAdoptRefusesMalformed(t *testing.T) {
	for _, h := range []string{"", "00-abc", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		if err := Adopt("tsk_x", h, ""); err != ErrTraceparent {
			t.Errorf("Adopt(%q) = %v, want ErrTraceparent", h, err)
		}
	}
}

func FuzzAdopt(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "")
	f.Fuzz(func(t *testing.T, h, state string) {
		if Adopt("tsk_fuzz", h, state) != nil {
			return
		}
		sc, ok := adopted("tsk_fuzz")
		if !ok || !sc.IsValid() || !sc.IsRemote() {
			t.Fatalf("accepted %q but adopted %v", h, sc)
		}
	})
}

// blocked is an exporter that holds every export until released.
type blocked struct {
	release chan struct{}
	once    sync.Once
}

func (b *blocked) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return nil
}
func (b *blocked) Shutdown(context.Context) error { b.once.Do(func() { close(b.release) }); return nil }

func TestFullQueueDropsAndWarnsOnce(t *testing.T) {
	var warn strings.Builder
	b := &blocked{release: make(chan struct{})}
	x, err := New(Options{Exporter: b, QueueSize: 4, Warn: &warn, FlushBudget: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var s event.Stream
	s.Add(x)
	s.Emit(event.Event{Type: "session_start", Fields: map[string]any{"session_id": "ses_q"}})
	// The worker and the SDK's batch queue fill, then ours: Emit never waits.
	for range 20000 {
		s.Emit(event.Event{Type: "retention", Fields: map[string]any{"session_id": "ses_old"}})
	}
	s.Emit(event.Event{Type: "session_end", Fields: map[string]any{"session_id": "ses_q", "exit_status": "ok"}})
	if x.Dropped() == 0 {
		t.Fatal("no span counted as dropped behind a stuck exporter")
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "queue is full") {
		t.Fatalf("warnings: %q, want one about the full queue", warn.String())
	}
}

// receiver is an in-process OTLP/HTTP traces endpoint.
func receiver(t *testing.T) (url string, got func() []*coltrace.ExportTraceServiceRequest) {
	return receiverOn(t, nil)
}

// receiverOn is receiver listening on l (nil: a port of its own).
func receiverOn(t *testing.T, l net.Listener) (url string, got func() []*coltrace.ExportTraceServiceRequest) {
	var mu sync.Mutex
	var reqs []*coltrace.ExportTraceServiceRequest
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs = append(reqs, &req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	if l != nil {
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, func() []*coltrace.ExportTraceServiceRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]*coltrace.ExportTraceServiceRequest(nil), reqs...)
	}
}

func TestExportsOverOTLPHTTP(t *testing.T) {
	url, got := receiver(t)
	var s event.Stream
	var warn strings.Builder
	x := Subscribe(&s, url, &warn, "")
	if x == nil {
		t.Fatalf("no exporter for %s: %s", url, warn.String())
	}
	<-x.probed // a session this short can end before the endpoint answered
	session(&s, "tsk_http")
	names := map[string]int{}
	traces := map[string]bool{}
	for _, r := range got() {
		for _, rs := range r.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					names[sp.Name]++
					traces[string(sp.TraceId)] = true
				}
			}
		}
	}
	if names[SpanSession] != 1 || names[SpanTask] != 1 || names[SpanTurn] != 2 || names["tool_call"] != 1 || len(traces) != 1 {
		t.Fatalf("received %v in %d traces, want one trace of session, task, 2 turns, tool_call", names, len(traces))
	}
	if x.Dropped() != 0 || warn.Len() != 0 {
		t.Fatalf("dropped %d, warned %q", x.Dropped(), warn.String())
	}
}

func TestEndpointDownNeverHoldsTheSession(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens: every export is refused
	var s event.Stream
	var warn strings.Builder
	x := Subscribe(&s, down, &warn, "")
	<-x.probed // the warning then names the refusal
	for range 3 {
		session(&s, "tsk_down")
	}
	// The refused connection (the probe's, or an export's when the
	// session ended first) is warned about once; session_end does not
	// wait for an endpoint that refused.
	if x.Dropped() == 0 && !x.failed.Load() {
		t.Fatal("a refused endpoint was neither found down nor its spans counted as dropped")
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "connection refused") {
		t.Fatalf("warnings %q, want exactly one, naming the refused connection", warn.String())
	}
}

// spanIDs are the span ids of requests (or of one spooled request), with
// how many times each came.
func spanIDs(reqs ...*coltrace.ExportTraceServiceRequest) map[string]int {
	ids := map[string]int{}
	for _, r := range reqs {
		for _, rs := range r.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					ids[string(sp.SpanId)]++
				}
			}
		}
	}
	return ids
}

// TestUndeliveredSpansAreSpooledAndSentOnce: an endpoint whose
// connections are never answered (dropped SYNs) costs the session's end
// no wait: it returns before the endpoint's answer (the probe is still
// pending, nothing was sent) and writes the session's spans to a spool
// file that the warning names. The next session that reaches the endpoint
// sends them first, exactly once, and removes the file; the one after
// sends only its own. Before, the end waited for the endpoint up to 1 s
// after the exporter started, then dropped the spans
// (BenchmarkSessionEndpointDown, blackholed 0.33 s sessions: +232 %).
func TestUndeliveredSpansAreSpooledAndSentOnce(t *testing.T) {
	root := t.TempDir()
	hole, reopen := blackhole(t)
	traces, _ := TracesURL(hole)
	sp := newSpool(root, traces)
	var warn strings.Builder
	x1, err := New(Options{Endpoint: hole, Warn: &warn, FlushBudget: time.Hour, SpoolDir: root})
	if err != nil {
		t.Fatal(err)
	}
	var s1 event.Stream
	s1.Add(x1)
	session(&s1, "tsk_spool1")
	select {
	case <-x1.probed:
		t.Fatal("the session's end came after the blackholed endpoint's answer: it waited for it")
	default:
	}
	if n := x1.relay.uploads.Load(); n != 0 {
		t.Fatalf("%d sends to an endpoint that never answered", n)
	}
	files, _ := sp.files()
	if len(files) != 1 || !strings.Contains(warn.String(), files[0].path) || !strings.Contains(warn.String(), "6 spans were not delivered") {
		t.Fatalf("spool files %v, warnings %q: want one file of 6 spans, named in the warning", files, warn.String())
	}
	b, err := os.ReadFile(files[0].path)
	if err != nil {
		t.Fatal(err)
	}
	var spooled coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &spooled); err != nil {
		t.Fatal(err)
	}
	first := spanIDs(&spooled)

	// The endpoint comes up at the same address.
	_, got := receiverOn(t, reopen())
	run := func(task string) {
		x, err := New(Options{Endpoint: hole, Warn: &warn, SpoolDir: root, FlushBudget: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		<-x.probed
		if !x.reached.Load() {
			t.Fatal("the receiver was not reached")
		}
		var s event.Stream
		s.Add(x)
		session(&s, task)
	}
	run("tsk_spool2")
	ids := spanIDs(got()...)
	if len(ids) != 12 {
		t.Fatalf("received %d spans after the second session, want its 6 and the first's 6", len(ids))
	}
	for id := range first {
		if ids[id] != 1 {
			t.Fatalf("a spooled span was received %d times, want once", ids[id])
		}
	}
	if left, _ := filepath.Glob(filepath.Join(sp.dir, "*")); len(left) != 0 {
		t.Fatalf("the spool still holds %v after its spans were sent", left)
	}
	run("tsk_spool3")
	ids = spanIDs(got()...)
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("span %x received %d times", id, n)
		}
	}
	if len(ids) != 18 {
		t.Fatalf("received %d spans after the third session, want 18", len(ids))
	}
}

// TestOrphanedClaimIsClaimedAgain: a spool file claimed by a mur that
// was killed before it sent it is claimed by the next session; one
// claimed by a mur still running (this process: a door runs many
// sessions) is left to it.
func TestOrphanedClaimIsClaimedAgain(t *testing.T) {
	sp := newSpool(t.TempDir(), "http://c:1/v1/traces")
	rs := func(name string) []*tracepb.ResourceSpans {
		return []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: name}}}}}}
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"orphan": dead.Process.Pid, "live": os.Getpid()} {
		path, _, _, err := sp.write(rs(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path, path+sendingExt+"-"+strconv.Itoa(pid)); err != nil {
			t.Fatal(err)
		}
	}
	got, bad := sp.claim()
	if len(got) != 1 || len(bad) != 0 || got[0].rs[0].ScopeSpans[0].Spans[0].Name != "orphan" {
		t.Fatalf("claimed %v (set aside %v): want the orphaned file only", got, bad)
	}
	sp.unclaim(got[0])
	if files, _ := sp.files(); len(files) != 1 {
		t.Fatalf("after unclaim the spool lists %v, want the orphan back", files)
	}
}

// TestSpoolStaysBounded: a spool file keeps the newest spans that fit its
// bound and counts the rest; a file that is not a spool is set aside.
func TestSpoolStaysBounded(t *testing.T) {
	sp := newSpool(t.TempDir(), "http://c:1/v1/traces")
	big := strings.Repeat("x", 1<<10)
	var spans []*tracepb.Span
	for i := range 6000 { // ~6 MB of attributes
		spans = append(spans, &tracepb.Span{Name: strconv.Itoa(i), Attributes: []*common.KeyValue{{Key: "k", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: big}}}}})
	}
	path, dropped, _, err := sp.write([]*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Size() > maxSpoolFile || dropped == 0 {
		t.Fatalf("spool file %v (%v), %d dropped: want under %d bytes with the oldest dropped", info, err, dropped, maxSpoolFile)
	}
	os.WriteFile(filepath.Join(sp.dir, "00000000000000000001-1.pb"), []byte("not a request\xff"), 0o600)
	got, bad := sp.claim()
	if len(got) != 1 || len(bad) != 1 || got[0].rs[0].ScopeSpans[0].Spans[len(got[0].rs[0].ScopeSpans[0].Spans)-1].Name != "5999" {
		t.Fatalf("claimed %d files, %v set aside: want the spool file with the newest span kept, the other aside", len(got), bad)
	}
}

func TestSubscribeIgnoresEmptyAndWarnsOnBadEndpoint(t *testing.T) {
	var s event.Stream
	if Subscribe(&s, " ", nil, "") != nil {
		t.Fatal("an empty endpoint attached an exporter")
	}
	var warn strings.Builder
	if Subscribe(&s, "localhost:4318", &warn, "") != nil || !strings.Contains(warn.String(), "http://") {
		t.Fatalf("a URL without a scheme: %q", warn.String())
	}
	for in, want := range map[string]string{"http://localhost:4318": "http://localhost:4318/v1/traces", "https://c.example/": "https://c.example/v1/traces", "http://c:1/otlp/v1/traces": "http://c:1/otlp/v1/traces"} {
		if got, err := TracesURL(in); err != nil || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Blackhole (for the tests and benchmarks) returns an endpoint on loopback whose connections are never
// answered: a socket listening with a backlog of 0 whose one queue slot
// is taken, so the kernel drops every further SYN, as a firewall that
// drops packets does. It is closed when the benchmark or test ends.
func Blackhole(tb testing.TB) string {
	tb.Helper()
	ep, _ := blackhole(tb)
	return ep
}

// blackhole is Blackhole, with reopen closing it and listening on its
// address instead (nil when called a second time).
func blackhole(tb testing.TB) (string, func() net.Listener) {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	var fillers []net.Conn
	var once sync.Once
	var addr string
	reopen := func() (l net.Listener) {
		once.Do(func() {
			syscall.Close(fd)
			for _, c := range fillers {
				c.Close()
			}
			if addr == "" {
				return
			}
			var err error
			if l, err = net.Listen("tcp", addr); err != nil {
				tb.Fatalf("listening again on %s: %v", addr, err)
			}
		})
		return l
	}
	tb.Cleanup(func() {
		if l := reopen(); l != nil {
			l.Close()
		}
	})
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	addr = "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the queue; later dials then hang in SYN retransmission.
	for range 2 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		fillers = append(fillers, c)
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		tb.Fatalf("%s still accepts connections: not a blackhole", addr)
	}
	return "http://" + addr, reopen
}

// BenchmarkSpoolWrite is the session end's cost with an endpoint that
// did not answer: one session's spans written to its spool file.
func BenchmarkSpoolWrite(b *testing.B) {
	sp := newSpool(b.TempDir(), "http://c:1/v1/traces")
	var spans []*tracepb.Span
	for i := range 12 {
		spans = append(spans, &tracepb.Span{Name: strconv.Itoa(i), TraceId: make([]byte, 16), SpanId: make([]byte, 8),
			Attributes: []*common.KeyValue{{Key: "murmur.task_id", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "tsk_0123456789"}}}}})
	}
	for b.Loop() {
		path, _, _, err := sp.write([]*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}}}})
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(path)
	}
}

// BenchmarkSessionEnd is what session_end's Emit costs (the last spans
// built, handed over, delivered or spooled) with the endpoint refused,
// blackholed and working, rotated: p50 and p90 of each, with a session
// of one task alive for 20 ms so the working endpoint's dial has
// connected and the blackholed one's is pending.
func BenchmarkSessionEnd(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	eps := []string{down, Blackhole(b), srv.URL}
	ends := make([][]time.Duration, len(eps))
	for i := range b.N {
		for j := range eps {
			k := (i + j) % len(eps)
			x, err := New(Options{Endpoint: eps[k], SpoolDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			var s event.Stream
			s.Add(x)
			s.Emit(event.Event{Type: "session_start", Fields: map[string]any{"session_id": "ses_b"}})
			s.Emit(event.Event{Type: "task_start", Fields: map[string]any{"task_id": "tsk_b"}})
			time.Sleep(20 * time.Millisecond)
			s.Emit(event.Event{Type: "task_end", Fields: map[string]any{"task_id": "tsk_b", "exit_status": "ok"}})
			t0 := time.Now()
			s.Emit(event.Event{Type: "session_end", Fields: map[string]any{"session_id": "ses_b", "exit_status": "ok"}})
			ends[k] = append(ends[k], time.Since(t0))
		}
	}
	for k, name := range []string{"refused", "blackholed", "working"} {
		slices.Sort(ends[k])
		b.ReportMetric(float64(ends[k][len(ends[k])/2].Microseconds()), name+"-p50-µs")
		b.ReportMetric(float64(ends[k][len(ends[k])*9/10].Microseconds()), name+"-p90-µs")
	}
}
