package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/guesttest"
	"github.com/murmur/mur/internal/wasm/cm"
)

// The hook here is examples/hook-probe-go, built by make guests; its
// capsule config (MURMUR_ARTIFACT_CONFIG) picks what it does.
func probe(t testing.TB) (*component.Runtime, *cm.Component) {
	t.Helper()
	b := guesttest.Read(t, "hook-probe-go")
	rt, err := component.New(cm.Config{CacheDir: filepath.Join(os.TempDir(), "mur-test-compile-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	c, err := rt.Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	return rt, c
}

// records collects a set's records.
type records struct {
	mu  sync.Mutex
	evs []event.Event
}

func (r *records) Emit(e event.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *records) of(typ string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, e := range r.evs {
		if e.Type == typ {
			out = append(out, e.Fields)
		}
	}
	return out
}

// fixture is one Set over probe hooks, each with its config and a
// directory of its own (scope "."), and the records it wrote.
type fixture struct {
	set  *Set
	rec  *records
	logs string
	dirs []string
}

func newSet(t testing.TB, specs []Spec, configs []string) *fixture {
	t.Helper()
	rt, c := probe(t)
	f := &fixture{rec: &records{}, logs: t.TempDir()}
	var callers []Caller
	for i, sp := range specs {
		dir := t.TempDir()
		f.dirs = append(f.dirs, dir)
		g := Grant{Scope: ".", Env: [][2]string{{"MURMUR_ARTIFACT_CONFIG", configs[i]}}}
		pol, err := g.Policy(dir, "", sp.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Deadline
		if d == 0 {
			d = DefaultDeadline
		}
		cc, err := NewComponent(context.Background(), rt, c, component.Options{Name: sp.Name, Policy: pol, Limits: cm.Limits{MemoryBytes: Memory, Deadline: d}})
		if err != nil {
			t.Fatal(err)
		}
		callers = append(callers, cc)
	}
	f.set = New(Options{Events: f.rec, Logs: f.logs}, specs, callers)
	t.Cleanup(func() { f.set.Close() })
	return f
}

func (f *fixture) lines(t testing.TB, i int) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dirs[i], "events.jsonl"))
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func toolEvent(i int) component.ToolEvent {
	return component.ToolEvent{Turn: uint32(i), ToolName: "t", Status: "passed"}
}

// Hooks are called in declaration order, only for their binding, and a
// blocking hook is done when Dispatch returns.
func TestDispatchOrderAndBinding(t *testing.T) {
	f := newSet(t, []Spec{{Name: "a/all"}, {Name: "a/shell", Binding: component.OnShell}, {Name: "a/tool", Binding: component.OnToolCall}},
		[]string{`{"log":"events.jsonl"}`, `{"log":"events.jsonl"}`, `{"log":"events.jsonl"}`})
	f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(1), map[string]any{"task_id": "tsk_1"})
	if n := len(f.lines(t, 0)); n != 1 {
		t.Fatalf("unbound hook got %d events", n)
	}
	if n := len(f.lines(t, 1)); n != 0 {
		t.Fatalf("on-shell hook got %d tool events", n)
	}
	if n := len(f.lines(t, 2)); n != 1 {
		t.Fatalf("on-tool-call hook got %d events", n)
	}
	calls := f.rec.of("hook_call")
	if len(calls) != 2 || calls[0]["hook"] != "a/all" || calls[1]["hook"] != "a/tool" || calls[0]["task_id"] != "tsk_1" {
		t.Fatalf("hook_call records = %v", calls)
	}
}

// A policy hook's err(reason) denies; a trap, a missed deadline and an arm
// other than none deny too (fail closed); none allows. Observers bound to
// the same event are not asked by Gate.
func TestGate(t *testing.T) {
	cases := []struct {
		name, config, want string
		deadline           time.Duration
	}{
		{"err is the deny", `{"deny_tools":["t"]}`, "deny: the tool t is not allowed", 0},
		{"trap", `{"trap":"on-tool-call"}`, "the policy hook failed", 0},
		{"deadline", `{"spin":"on-tool-call"}`, "ran past", 300 * time.Millisecond},
		{"garbage arm", `{"wrong_arm":"on-tool-call"}`, "answered write-manifests", 0},
		{"allowed", `{}`, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSet(t, []Spec{{Name: "p/gate", Binding: component.OnToolCall, Policy: PolicyDeny, Deadline: c.deadline, DeadlineField: "artifacts[1].capabilities.limits.deadline_seconds"}}, []string{c.config})
			d := f.set.Gate(context.Background(), component.OnToolCall, toolEvent(1), nil)
			if c.want == "" {
				if d != nil {
					t.Fatalf("denied: %+v", d)
				}
				return
			}
			if d == nil || !strings.Contains(d.Reason, c.want) || d.Hook != "p/gate" {
				t.Fatalf("denial = %+v, want one containing %q", d, c.want)
			}
			if c.deadline > 0 && !strings.Contains(d.Reason, "artifacts[1].capabilities.limits.deadline_seconds") {
				t.Errorf("a deadline denial does not name the key: %s", d.Reason)
			}
			if den := f.rec.of("hook_denied"); len(den) != 1 || den[0]["reason"] != d.Reason {
				t.Errorf("hook_denied = %v", den)
			}
			// The policy hook still answers the next call: a trapped
			// instance is replaced.
			if c.name == "trap" {
				if d := f.set.Gate(context.Background(), component.OnToolCall, toolEvent(2), nil); d == nil {
					t.Errorf("second call after a trap was allowed")
				}
			}
		})
	}
}

// An arm the handler does not honour is discarded with a log line and,
// from a blocking hook, a hook_dispatch_error; the honoured arm is
// committed only under the matching commit_policy.
func TestJudgeArms(t *testing.T) {
	f := newSet(t, []Spec{
		{Name: "j/wrong"},
		{Name: "j/reopen", Binding: component.OnTaskEnd, Policy: PolicyReopenTask},
		{Name: "j/observer", Binding: component.OnTaskEnd},
	}, []string{`{"wrong_arm":"on-session-start"}`, `{"reopen":"again"}`, `{"reopen":"ignored"}`})
	r := f.set.Dispatch(context.Background(), component.OnSessionStart, component.SessionContext{}, nil)
	if len(r.Commits) != 0 {
		t.Fatalf("commits = %v", r.Commits)
	}
	errs := f.rec.of("hook_dispatch_error")
	if len(errs) != 1 || errs[0]["fault"] != "unsupported_arm" || errs[0]["arm"] != "write-manifests" || errs[0]["hook"] != "j/wrong" {
		t.Fatalf("hook_dispatch_error = %v", errs)
	}
	b, _ := os.ReadFile(LogPath(f.logs, "j/wrong"))
	if !strings.Contains(string(b), "on-session-start returned write-manifests") {
		t.Errorf("log = %q", b)
	}
	r = f.set.Dispatch(context.Background(), component.OnTaskEnd, component.TaskEndEvent{TaskID: "x", ExitStatus: "ok"}, nil)
	if len(r.Commits) != 1 || r.Commits[0].Hook != "j/reopen" || r.Commits[0].Output.Text != "again" {
		t.Fatalf("commits = %+v", r.Commits)
	}
	b, _ = os.ReadFile(LogPath(f.logs, "j/observer"))
	if !strings.Contains(string(b), "commit_policy is none") {
		t.Errorf("observer's discarded reopen not logged: %q", b)
	}
}

// An async hook runs on one instance, in order, off the caller's path;
// the drain at the session's end waits for every queued call.
func TestAsyncOrderedAndDrained(t *testing.T) {
	f := newSet(t, []Spec{{Name: "q/async", Async: true}}, []string{`{"log":"events.jsonl"}`})
	const n = 200
	for i := 1; i <= n; i++ {
		f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(i), nil)
	}
	f.set.Drain(time.Minute)
	lines := f.lines(t, 0)
	if len(lines) != n {
		t.Fatalf("%d events handled, want %d", len(lines), n)
	}
	for i, l := range lines {
		if l["seq"] != float64(i+1) || l["data"].(map[string]any)["turn"] != float64(i+1) {
			t.Fatalf("line %d = %v: calls reordered or on another instance", i, l)
		}
	}
	dr := f.rec.of("hook_drain")
	if len(dr) != 1 || dr[0]["abandoned"] != false || dr[0]["dropped"] != int64(0) {
		t.Fatalf("hook_drain = %v", dr)
	}
}

// Under on_overflow: drop a full queue discards events without waiting and
// counts each one: handled + dropped is exactly what was dispatched.
// Under block, nothing is lost.
func TestAsyncOverflow(t *testing.T) {
	for _, block := range []bool{false, true} {
		name := map[bool]string{false: "drop", true: "block"}[block]
		t.Run(name, func(t *testing.T) {
			f := newSet(t, []Spec{{Name: "q/slow", Async: true, Queue: 4, Block: block}}, []string{`{"log":"events.jsonl"}`})
			const n = 500
			for i := 1; i <= n; i++ {
				f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(i), nil)
			}
			f.set.Drain(time.Minute)
			handled := len(f.lines(t, 0))
			dropped := f.set.Hooks()[0].Dropped()
			if int64(handled)+dropped != n {
				t.Fatalf("handled %d + dropped %d != %d dispatched", handled, dropped, n)
			}
			if block && dropped != 0 {
				t.Fatalf("block dropped %d", dropped)
			}
			if !block && dropped == 0 {
				t.Fatalf("a 4-deep queue took %d events from a tight loop without dropping one", n)
			}
			if dr := f.rec.of("hook_drain"); len(dr) != 1 || dr[0]["dropped"] != dropped {
				t.Fatalf("hook_drain = %v, dropped %d", dr, dropped)
			}
		})
	}
}

// An async hook's err is logged and recorded as hook_dispatch_error (its
// log is otherwise the only place it shows); a hook still working when
// the drain budget runs out is abandoned and reported.
func TestAsyncFaults(t *testing.T) {
	f := newSet(t, []Spec{{Name: "q/fails", Async: true}, {Name: "q/stuck", Async: true}},
		[]string{`{"fail":"on-tool-call"}`, `{"spin":"on-session-end"}`})
	f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(1), nil)
	f.set.Dispatch(context.Background(), component.OnSessionEnd, component.SessionEndEvent{}, nil)
	start := time.Now()
	f.set.Drain(300 * time.Millisecond)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("drain took %s", d)
	}
	errs := f.rec.of("hook_dispatch_error")
	var kinds []string
	for _, e := range errs {
		kinds = append(kinds, e["hook"].(string)+":"+e["fault"].(string))
	}
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "q/fails:error") || !strings.Contains(got, "q/stuck:abandoned") {
		t.Fatalf("hook_dispatch_error = %v", errs)
	}
	dr := f.rec.of("hook_drain")
	if len(dr) != 2 || dr[0]["abandoned"] != false || dr[1]["abandoned"] != true {
		t.Fatalf("hook_drain = %v", dr)
	}
	b, _ := os.ReadFile(LogPath(f.logs, "q/stuck"))
	if !strings.Contains(string(b), "drain budget") {
		t.Errorf("log = %q", b)
	}
	// Nothing is recorded once the set is closed.
	f.set.Close()
	n := len(f.rec.of("hook_call"))
	f.set.Record("hook_call", map[string]any{})
	if len(f.rec.of("hook_call")) != n {
		t.Errorf("a record was written after Close")
	}
}

// A hook that balloons its memory traps at the hook ceiling instead of
// taking the host's memory; the fault is logged and the next call gets a
// fresh instance.
func TestBalloonTraps(t *testing.T) {
	f := newSet(t, []Spec{{Name: "m/grow"}}, []string{`{"grow":"on-inference","log":"events.jsonl"}`})
	r := f.set.Dispatch(context.Background(), component.OnInference, component.InferenceEvent{Turn: 1}, nil)
	if len(r.Errs) != 1 {
		t.Fatalf("errs = %v", r.Errs)
	}
	b, _ := os.ReadFile(LogPath(f.logs, "m/grow"))
	if !strings.Contains(string(b), "on-inference fault") {
		t.Errorf("log = %q", b)
	}
	r = f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(1), nil)
	if len(r.Errs) != 0 || len(f.lines(t, 0)) != 1 {
		t.Fatalf("the next call after a trap: errs %v, lines %d", r.Errs, len(f.lines(t, 0)))
	}
}

// A stuck async hook under on_overflow: drop never holds up dispatch: with
// its worker inside a call that does not return, a queue of 8 takes 8
// more events and every one past them is dropped and counted, exactly.
func TestAsyncStuckDropsExactly(t *testing.T) {
	f := newSet(t, []Spec{{Name: "q/stuck", Async: true, Queue: 8}}, []string{`{"spin":"on-tool-call"}`})
	h := f.set.Hooks()[0]
	f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(0), nil)
	for len(h.q) != 0 { // the worker has taken the first event and spins in it
		time.Sleep(time.Millisecond)
	}
	for i := 1; i <= 8+100; i++ {
		f.set.Dispatch(context.Background(), component.OnToolCall, toolEvent(i), nil)
	}
	if d := h.Dropped(); d != 100 {
		t.Fatalf("dropped %d, want exactly 100", d)
	}
	f.set.Drain(100 * time.Millisecond)
	dr := f.rec.of("hook_drain")
	if len(dr) != 1 || dr[0]["abandoned"] != true || dr[0]["dropped"] != int64(100) {
		t.Fatalf("hook_drain = %v", dr)
	}
}

// A state grant mounts the durable store as state/, beside no other
// directory: the hook writes there and nowhere else.
func TestStateGrant(t *testing.T) {
	rt, c := probe(t)
	store := filepath.Join(t.TempDir(), "state", "notes")
	g := Grant{StateDir: store, Env: [][2]string{{"MURMUR_ARTIFACT_CONFIG", `{"log":"/state/events.jsonl"}`}}}
	pol, err := g.Policy(t.TempDir(), "", "s/state", nil)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := NewComponent(context.Background(), rt, c, component.Options{Name: "s/state", Policy: pol, Limits: cm.Limits{MemoryBytes: Memory, Deadline: DefaultDeadline}})
	if err != nil {
		t.Fatal(err)
	}
	set := New(Options{Events: &records{}}, []Spec{{Name: "s/state"}}, []Caller{cc})
	defer set.Close()
	if r := set.Dispatch(context.Background(), component.OnToolCall, toolEvent(1), nil); len(r.Errs) != 0 {
		t.Fatal(r.Errs)
	}
	if b, err := os.ReadFile(filepath.Join(store, "events.jsonl")); err != nil || !strings.Contains(string(b), "on-tool-call") {
		t.Fatalf("store: %q, %v", b, err)
	}
}
