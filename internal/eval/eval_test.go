package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	_, s, notes := Parse([]byte(`{"dataset_id":"d","scorers":[{"type":"exit_ok"},{"type":"max_turns","name":"t"},{"type":"max_tokens","max":5},{"type":"tool_sequence","expected":["a"]},{"type":"llm_judge","name":"j"},{"type":"nope"}]}`))
	if len(s) != 4 {
		t.Fatalf("scorers = %+v", s)
	}
	if s[0].Name != "exit_ok" || s[1].Name != "t" || *s[1].Max != DefaultMaxTurns || *s[2].Max != 5 {
		t.Errorf("defaults: %+v", s)
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, "scorers[4] (j): llm_judge is not implemented") || !strings.Contains(all, `unknown scorer type "nope" skipped`) {
		t.Errorf("notes = %q", notes)
	}
	if _, s, notes := Parse(nil); len(s) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "writes no eval.jsonl") {
		t.Errorf("absent: %v %q", s, notes)
	}
}

func TestScore(t *testing.T) {
	_, s, _ := Parse([]byte(`{"scorers":[{"type":"exit_ok"},{"type":"max_turns","max":2},{"type":"max_tokens","max":100},{"type":"tool_sequence","expected":["a","c"]}]}`))
	o := Observed{SessionID: "ses_1", ExitStatus: "ok", Turns: 3, InputTokens: 60, OutputTokens: 40, Tools: []string{"a", "b", "c"}}
	rs := Score(o, s, "ds")
	want := []bool{true, false, true, true}
	if len(rs) != 5 || rs[4].Event != "dataset_run" || *rs[4].PassedN != 3 || rs[4].Scores != 4 {
		t.Fatalf("records = %+v", rs)
	}
	for i, w := range want {
		if *rs[i].Passed != w {
			t.Errorf("%s passed = %v, want %v", rs[i].Scorer, *rs[i].Passed, w)
		}
	}
	if rs[2].Value != int64(100) {
		t.Errorf("max_tokens value = %v, want in+out", rs[2].Value)
	}
	o.Tools = []string{"c", "a"}
	o.ExitStatus = "failed"
	rs = Score(o, s, "")
	if len(rs) != 4 || *rs[0].Passed || *rs[3].Passed {
		t.Errorf("out of order / failed: %+v", rs)
	}
}

func TestAppendRead(t *testing.T) {
	_, s, _ := Parse([]byte(`{"scorers":[{"type":"exit_ok"}]}`))
	p := filepath.Join(t.TempDir(), File)
	for i := 0; i < 2; i++ {
		if err := Append(p, Score(Observed{SessionID: "ses_1", ExitStatus: "ok"}, s, "d")); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(p)
	rs, err := Read(bytes.NewReader(b))
	if err != nil || len(rs) != 4 || rs[1].Event != "dataset_run" {
		t.Fatalf("read %d records: %v", len(rs), err)
	}
	if _, err := Read(strings.NewReader("{}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed: %v", err)
	}
}
