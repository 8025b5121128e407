// Package eval is murmur/hook-eval's scoring and the eval.jsonl it writes
// (spec 004 observability.eval): the scorers, what each one measures of a
// session, and the records mur eval reads back. It imports only the
// standard library, so the hook component (hooks/hook-eval, built for
// wasip1) and the mur binary share one definition.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Scorer types (observability.eval.scorers[].type).
const (
	ExitOK       = "exit_ok"
	MaxTurns     = "max_turns"
	MaxTokens    = "max_tokens"
	ToolSequence = "tool_sequence"
	LLMJudge     = "llm_judge"
)

// Defaults of scorers[].max.
const (
	DefaultMaxTurns  = 10
	DefaultMaxTokens = 100000
)

// File is the name of the records file in the hook's records directory
// (the session's hooks/ under filesystem.records: true).
const File = "eval.jsonl"

// Env names the runtime forwards to hooks: the observability.eval block
// as compact JSON, and its dataset_id.
const (
	EnvConfig  = "MURMUR_EVAL_CONFIG"
	EnvDataset = "MURMUR_DATASET_ID"
)

// Scorer is one scorers[] entry.
type Scorer struct {
	Type     string   `json:"type"`
	Name     string   `json:"name,omitempty"`
	Max      *int64   `json:"max,omitempty"`
	Expected []string `json:"expected,omitempty"`
}

// Config is the observability.eval block.
type Config struct {
	DatasetID string   `json:"dataset_id,omitempty"`
	Scorers   []Scorer `json:"scorers,omitempty"`
}

// Parse reads the block as the runtime forwards it and returns the
// scorers that score, each with its name and max defaulted, and a message
// for each entry that does not: an unknown type is skipped, llm_judge
// parses and is unimplemented (spec 004), and no scorer at all makes the
// hook a no-op.
func Parse(b []byte) (Config, []Scorer, []string) {
	var c Config
	var notes []string
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &c); err != nil {
			return c, nil, []string{fmt.Sprintf("observability.eval cannot be read (%v): no scores are written", err)}
		}
	}
	var out []Scorer
	for i, s := range c.Scorers {
		if s.Name == "" {
			s.Name = s.Type
		}
		switch s.Type {
		case ExitOK, ToolSequence:
		case MaxTurns:
			if s.Max == nil {
				s.Max = ptr(DefaultMaxTurns)
			}
		case MaxTokens:
			if s.Max == nil {
				s.Max = ptr(DefaultMaxTokens)
			}
		case LLMJudge:
			notes = append(notes, fmt.Sprintf("observability.eval.scorers[%d] (%s): llm_judge is not implemented; it emits no score", i, s.Name))
			continue
		default:
			notes = append(notes, fmt.Sprintf("observability.eval.scorers[%d]: unknown scorer type %q skipped (one of exit_ok, max_turns, max_tokens, tool_sequence, llm_judge)", i, s.Type))
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		notes = append(notes, "observability.eval declares no scorer that scores: murmur/hook-eval writes no eval.jsonl")
	}
	return c, out, notes
}

func ptr(n int64) *int64 { return &n }

// Observed is what the hook saw of a session.
type Observed struct {
	SessionID    string
	Capsule      string
	ExitStatus   string
	Turns        int64
	InputTokens  int64
	OutputTokens int64
	// Tools are the tool calls' names, in call order.
	Tools []string
}

// Record is one line of eval.jsonl. Event is "score" (one per scorer) or
// "dataset_run" (one per session with a dataset_id, after its scores).
type Record struct {
	Event     string `json:"event"`
	SessionID string `json:"session_id"`
	DatasetID string `json:"dataset_id,omitempty"`
	// A score's scorer name and type, whether it passed, the value
	// measured and the bound or sequence it was held to.
	Scorer   string   `json:"scorer,omitempty"`
	Type     string   `json:"type,omitempty"`
	Passed   *bool    `json:"passed,omitempty"`
	Value    any      `json:"value,omitempty"`
	Max      *int64   `json:"max,omitempty"`
	Expected []string `json:"expected,omitempty"`
	// A dataset_run's capsule, exit status and count of passed scores.
	Capsule    string `json:"capsule,omitempty"`
	ExitStatus string `json:"exit_status,omitempty"`
	Scores     int    `json:"scores,omitempty"`
	PassedN    *int   `json:"passed_scores,omitempty"`
}

// Score holds o to each scorer and returns the records, in scorer order,
// then the dataset_run record when datasetID is set.
func Score(o Observed, scorers []Scorer, datasetID string) []Record {
	var out []Record
	passed := 0
	for _, s := range scorers {
		r := Record{Event: "score", SessionID: o.SessionID, DatasetID: datasetID, Scorer: s.Name, Type: s.Type}
		var ok bool
		switch s.Type {
		case ExitOK:
			ok, r.Value = o.ExitStatus == "ok", o.ExitStatus
		case MaxTurns:
			ok, r.Value, r.Max = o.Turns <= *s.Max, o.Turns, s.Max
		case MaxTokens:
			n := o.InputTokens + o.OutputTokens
			ok, r.Value, r.Max = n <= *s.Max, n, s.Max
		case ToolSequence:
			ok, r.Value, r.Expected = Subsequence(s.Expected, o.Tools), append([]string{}, o.Tools...), append([]string{}, s.Expected...)
		default:
			continue
		}
		r.Passed = &ok
		if ok {
			passed++
		}
		out = append(out, r)
	}
	if datasetID != "" {
		out = append(out, Record{Event: "dataset_run", SessionID: o.SessionID, DatasetID: datasetID, Capsule: o.Capsule,
			ExitStatus: o.ExitStatus, Scores: len(out), PassedN: &passed})
	}
	return out
}

// Subsequence reports whether want appears in got in order, not
// necessarily adjacent.
func Subsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// Append writes records to path, one JSON line each.
func Append(path string, rs []Record) error {
	var b bytes.Buffer
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(b.Bytes())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// Read parses an eval.jsonl; a malformed line fails with its number.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []Record
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Event == "" {
			return out, fmt.Errorf("line %d: not an eval record", n)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}
