package timeline

import (
	"fmt"
	"strings"
	"testing"
)

func readString(t *testing.T, lines ...string) *Session {
	t.Helper()
	s, err := Read(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(turn int, id, tool, status, effect, rid string) string {
	l := fmt.Sprintf(`{"event":"tool_call","ts":"2026-12-01T10:00:0%dZ","task_id":"t1","turn":%d,"tool":%q,"call_id":%q,"status":%q,"state_effect":%q`, turn, turn, tool, id, status, effect)
	if rid != "" {
		l += fmt.Sprintf(`,"resource_id":%q`, rid)
	}
	return l + "}"
}

// A read repeats an earlier one when nothing that may have changed the
// resource ran in between: a mutate or unknown call on it, or one with no
// resource_id, ends the earlier read's standing; a failed read or one
// without a resource_id is never credited.
func TestRedundant(t *testing.T) {
	s := readString(t,
		`{"event":"session_start","ts":"2026-12-01T10:00:00Z","session_id":"ses_r"}`,
		`{"event":"task_start","ts":"2026-12-01T10:00:00Z","task_id":"t1"}`,
		`{"event":"inference","ts":"2026-12-01T10:00:01Z","task_id":"t1","turn":1,"stop_reason":"tool_use"}`,
		call(1, "a", "read_file", "passed", "read", "file:a"),
		call(1, "b", "read_file", "passed", "read", "file:a"), // redundant of a
		call(1, "c", "read_file", "failed", "read", "file:b"),
		call(1, "d", "read_file", "passed", "read", "file:b"), // first passed read of b
		call(1, "e", "write_file", "passed", "mutate", "file:a"),
		call(1, "f", "read_file", "passed", "read", "file:a"), // a changed: not redundant
		call(1, "g", "read_file", "passed", "read", "file:b"), // redundant of d
		call(1, "h", "bash", "passed", "unknown", ""),         // may have changed anything
		call(1, "i", "read_file", "passed", "read", "file:b"), // not redundant
		call(1, "j", "grep", "passed", "read", ""),            // undeclared: never credited
		call(1, "k", "grep", "passed", "read", ""),
		`{"event":"task_start","ts":"2026-12-01T10:00:08Z","task_id":"t2"}`,
		`{"event":"tool_call","ts":"2026-12-01T10:00:09Z","task_id":"t2","turn":1,"tool":"read_file","call_id":"z","status":"passed","state_effect":"read","resource_id":"file:a"}`,
	)
	got := []string{}
	for _, r := range s.Redundant() {
		got = append(got, r.CallID+"<"+r.FirstCallID)
	}
	if fmt.Sprint(got) != "[b<a g<d]" {
		t.Fatalf("redundant %v", got)
	}
	rep := NewReport([]*Session{s, s})
	if rep.ToolCalls != 24 || rep.FailedCalls != 2 || len(rep.Redundant) != 4 || rep.Sessions[0].Redundant != 2 || rep.Statuses[""] != 2 {
		t.Fatalf("report %+v", rep)
	}
}
