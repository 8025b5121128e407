package timeline

import "fmt"

// Step is one thing a session did, in order: a turn's answer or a tool
// call. Two runs of the same capsule diverge at the first step that
// differs.
type Step struct {
	Task int    `json:"task"` // the task's position in the session, from 1
	Turn int64  `json:"turn"`
	What string `json:"what"` // "turn" or "tool"
	Name string `json:"name"` // the stop reason, or the tool's name
	// Status is a tool call's status, or a turn's error.
	Status string `json:"status,omitempty"`
}

func (s Step) String() string {
	if s.What == "tool" {
		return fmt.Sprintf("task %d turn %d: tool %s %s", s.Task, s.Turn, s.Name, s.Status)
	}
	out := fmt.Sprintf("task %d turn %d: model %s", s.Task, s.Turn, s.Name)
	if s.Status != "" {
		out += " (" + s.Status + ")"
	}
	return out
}

// Steps lists a session's steps in order.
func (s *Session) Steps() []Step {
	var out []Step
	for i, t := range s.Tasks {
		for _, u := range t.Turns {
			out = append(out, Step{Task: i + 1, Turn: u.N, What: "turn", Name: u.StopReason, Status: u.Error})
			for _, c := range u.Tools {
				out = append(out, Step{Task: i + 1, Turn: u.N, What: "tool", Name: c.Name, Status: c.Status})
			}
		}
	}
	return out
}

// Diff is where two sessions diverged, and their totals side by side.
type Diff struct {
	A, B string `json:"-"`
	// Same is true when every step matches.
	Same bool `json:"same"`
	// At is the index of the first differing step; A and B that step in
	// each (nil where one run has no more steps).
	At    int   `json:"at"`
	StepA *Step `json:"step_a,omitempty"`
	StepB *Step `json:"step_b,omitempty"`
	// Totals: [A, B].
	ExitStatus   [2]string `json:"exit_status"`
	Turns        [2]int64  `json:"turns"`
	InputTokens  [2]int64  `json:"input_tokens"`
	OutputTokens [2]int64  `json:"output_tokens"`
	Charged      [2]int64  `json:"charged"`
	DurationMS   [2]int64  `json:"duration_ms"`
}

// Compare finds where b diverged from a.
func Compare(a, b *Session) Diff {
	d := Diff{
		ExitStatus: [2]string{a.ExitStatus, b.ExitStatus}, Turns: [2]int64{a.Turns, b.Turns},
		InputTokens: [2]int64{a.InputTokens, b.InputTokens}, OutputTokens: [2]int64{a.OutputTokens, b.OutputTokens},
		Charged: [2]int64{a.Charged, b.Charged}, DurationMS: [2]int64{a.DurationMS, b.DurationMS},
	}
	sa, sb := a.Steps(), b.Steps()
	for i := 0; ; i++ {
		if i >= len(sa) && i >= len(sb) {
			d.Same = a.ExitStatus == b.ExitStatus
			d.At = i
			return d
		}
		if i < len(sa) && i < len(sb) && sa[i] == sb[i] {
			continue
		}
		d.At = i
		if i < len(sa) {
			d.StepA = &sa[i]
		}
		if i < len(sb) {
			d.StepB = &sb[i]
		}
		return d
	}
}
