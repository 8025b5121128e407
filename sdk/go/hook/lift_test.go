package hook

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/internal/abi"
	"github.com/murmur/mur/sdk/go/internal/abi/abitest"
)

func str(s string) *string { return &s }

// putStrings lowers a list<string> the way a host would and returns its
// (ptr, len).
func putStrings(m *abitest.Memory, ss ...string) (uint32, uint32) {
	base := m.Alloc(uint32(len(ss))*8, 4)
	for i, s := range ss {
		abi.PutU32(m, base+uint32(i)*8, m.Put([]byte(s)))
		abi.PutU32(m, base+uint32(i)*8+4, uint32(len(s)))
	}
	return base, uint32(len(ss))
}

func TestLiftEvents(t *testing.T) {
	m := abitest.New(1 << 14)
	s := func(v string) (uint32, uint32) { return m.Put([]byte(v)), uint32(len(v)) }

	lp, ln := putStrings(m, "git", "ls")
	if got := liftStage(m, lp, ln); !reflect.DeepEqual(got.ShellAllow, []string{"git", "ls"}) {
		t.Errorf("stage = %+v", got)
	}

	p0, n0 := s("cap")
	p1, n1 := s("1.0.0")
	p2, n2 := s("sess")
	p3, n3 := s("model")
	cp, cn := putStrings(m, "net")
	want := SessionContext{"cap", "1.0.0", "sess", "model", []string{"net"}}
	if got := liftSession(m, p0, n0, p1, n1, p2, n2, p3, n3, cp, cn); !reflect.DeepEqual(got, want) {
		t.Errorf("session = %+v, want %+v", got, want)
	}

	if got := liftTaskStart(m, p0, n0, p1, n1, p2, n2, 1<<40); got != (TaskStartEvent{"cap", "1.0.0", "sess", 1 << 40}) {
		t.Errorf("task start = %+v", got)
	}
	if got := liftTaskEnd(m, p0, n0, p1, n1); got != (TaskEndEvent{"cap", "1.0.0"}) {
		t.Errorf("task end = %+v", got)
	}

	// inference-event travels in memory: 17 flat values exceed the limit.
	ev := m.Alloc(80, 8)
	abi.PutU32(m, ev, 7)
	abi.PutU64(m, ev+8, 100)
	abi.PutU64(m, ev+16, math.MaxUint64)
	dp, dn := s("tool")
	abi.PutU32(m, ev+24, dp)
	abi.PutU32(m, ev+28, dn)
	m.Data[ev+32] = 1
	tp, tn := s("echo")
	abi.PutU32(m, ev+36, tp)
	abi.PutU32(m, ev+40, tn)
	m.Data[ev+68] = 1
	abi.PutU32(m, ev+72, tp)
	abi.PutU32(m, ev+76, tn)
	wantInf := InferenceEvent{Turn: 7, InputTokens: 100, OutputTokens: math.MaxUint64, Decision: "tool", ToolName: str("echo"), Tools: str("echo")}
	if got := liftInference(m, ev); !reflect.DeepEqual(got, wantInf) {
		t.Errorf("inference = %+v, want %+v", got, wantInf)
	}

	if got := liftTool(m, 3, tp, tn, 1, 2, 3, p0, n0); got != (ToolEvent{3, "echo", 1, 2, 3, "cap"}) {
		t.Errorf("tool = %+v", got)
	}
	neg := int32(-2)
	wantShell := ShellEvent{4, "echo", "cap", -2, "1.0.0", "sess", 5, 6, 7}
	if got := liftShell(m, 4, tp, tn, p0, n0, uint32(neg), p1, n1, p2, n2, 5, 6, 7); got != wantShell {
		t.Errorf("shell = %+v, want %+v", got, wantShell)
	}

	mp := m.Alloc(32, 4)
	for i, v := range []string{"user", "hi", "assistant", "hello"} {
		vp, vn := s(v)
		abi.PutU32(m, mp+uint32(i)*8, vp)
		abi.PutU32(m, mp+uint32(i)*8+4, vn)
	}
	wantComp := CompactionEvent{[]Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}, 9, 0.75, nil, str("model")}
	if got := liftCompaction(m, mp, 2, 9, 0.75, 0, 0, 0, 1, p3, n3); !reflect.DeepEqual(got, wantComp) {
		t.Errorf("compaction = %+v, want %+v", got, wantComp)
	}
	if got := liftSessionEnd(m, 1, 2, 3, 4, 5, 6, p0, n0); got != (SessionEndEvent{1, 2, 3, 4, 5, 6, "cap"}) {
		t.Errorf("session end = %+v", got)
	}
}

// decodeAnswer reads result<hook-output, string> by the ABI's layout.
func decodeAnswer(m *abitest.Memory, p uint32) (Output, string, bool) {
	if m.Data[p] == 1 {
		return Output{}, abi.GetString(m, p+4), false
	}
	out := Output{Kind: Kind(m.Data[p+4])}
	switch out.Kind {
	case KindReplaceContext:
		for _, kv := range abi.Pairs(m, abi.U32(m, p+8), abi.U32(m, p+12)) {
			out.Messages = append(out.Messages, Message{Role: kv[0], Content: kv[1]})
		}
	case KindWriteManifests:
		for _, kv := range abi.Pairs(m, abi.U32(m, p+8), abi.U32(m, p+12)) {
			out.Manifests = append(out.Manifests, ToolManifest{kv[0], kv[1]})
		}
	case KindArtifact, KindReopenTask:
		out.Text = abi.GetString(m, p+8)
	}
	return out, "", true
}

func TestLowerResult(t *testing.T) {
	tests := []struct {
		name string
		out  Output
	}{
		{"none", None()},
		{"replace-context", ReplaceContext([]Message{{Role: "system", Content: "summary"}, {Role: "user", Content: "go on"}})},
		{"write-manifests", WriteManifests([]ToolManifest{{"pytest", "name: pytest"}})},
		{"artifact", Artifact("report.md")},
		{"reopen-task", ReopenTask("tests fail: fix them")},
		{"empty replace", ReplaceContext(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := abitest.New(1 << 12)
			got, _, ok := decodeAnswer(m, lowerResult(m, tt.out, nil))
			if !ok || !reflect.DeepEqual(got, tt.out) {
				t.Errorf("got %+v (ok %v), want %+v", got, ok, tt.out)
			}
		})
	}
	m := abitest.New(1 << 12)
	if _, msg, ok := decodeAnswer(m, lowerResult(m, Artifact("x"), errors.New("disk full"))); ok || msg != "disk full" {
		t.Errorf("error answer = %q ok=%v", msg, ok)
	}
}

func TestDispatch(t *testing.T) {
	if out, err := dispatch[StageEvent](nil, StageEvent{}); err != nil || out.Kind != KindNone {
		t.Errorf("nil handler = %+v, %v; want none", out, err)
	}
	bad := func(StageEvent) (Output, error) { return Output{Kind: 9}, nil }
	if _, err := dispatch(bad, StageEvent{}); err == nil {
		t.Error("an out-of-range kind was not refused")
	}
	handlers = nil
	if current().OnStage != nil {
		t.Error("current with no Run has handlers")
	}
	Run(Handlers{OnShell: func(ShellEvent) (Output, error) { return None(), nil }})
	t.Cleanup(func() { handlers = nil })
	if current().OnShell == nil {
		t.Error("Run did not register the handlers")
	}
}
