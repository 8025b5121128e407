package timeline

// Report is mur trace report: totals across sessions and the redundant
// tool calls each made.
type Report struct {
	Sessions     []SessionTotals `json:"sessions"`
	Turns        int64           `json:"turns"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	Charged      int64           `json:"charged"`
	DurationMS   int64           `json:"duration_ms"`
	ToolCalls    int             `json:"tool_calls"`
	FailedCalls  int             `json:"failed_calls"`
	// Statuses counts the sessions by exit status ("" for one with no
	// session_end).
	Statuses  map[string]int `json:"statuses"`
	Redundant []Redundant    `json:"redundant"`
}

// SessionTotals is one session's line of a report.
type SessionTotals struct {
	ID           string `json:"session_id"`
	Capsule      string `json:"capsule,omitempty"`
	ExitStatus   string `json:"exit_status,omitempty"`
	Tasks        int    `json:"tasks"`
	Turns        int64  `json:"turns"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	Charged      int64  `json:"charged"`
	DurationMS   int64  `json:"duration_ms"`
	ToolCalls    int    `json:"tool_calls"`
	FailedCalls  int    `json:"failed_calls"`
	Redundant    int    `json:"redundant"`
}

// Redundant is a read that observed what an earlier read of the same
// resource, in the same task, had already observed: no call that may have
// changed it ran in between.
type Redundant struct {
	SessionID  string `json:"session_id"`
	TaskID     string `json:"task_id"`
	Turn       int64  `json:"turn"`
	Tool       string `json:"tool"`
	CallID     string `json:"call_id,omitempty"`
	ResourceID string `json:"resource_id"`
	// FirstTurn and FirstCallID are the earlier read it repeats.
	FirstTurn   int64  `json:"first_turn"`
	FirstCallID string `json:"first_call_id,omitempty"`
}

// Redundant lists the session's redundant reads (spec 000 state_effect
// and resource_id). A passed call with state_effect read and a resource_id
// is credited as redundant when an earlier passed read of the same
// resource_id (byte-equal) in the same task stands: no call since declared
// mutate or an unknown effect on that resource, and none declared one
// without a resource_id, which may have changed anything. A call without
// a resource_id is never credited: the trace does not record a call's
// input, so the spec's path-field fallback has nothing to read here.
func (s *Session) Redundant() []Redundant {
	var out []Redundant
	for _, t := range s.Tasks {
		type read struct {
			turn int64
			call string
		}
		seen := map[string]read{}
		for _, u := range t.Turns {
			for _, c := range u.Tools {
				switch {
				case c.StateEffect == "read" && c.ResourceID != "":
					if c.Status != "passed" {
						continue
					}
					if r, ok := seen[c.ResourceID]; ok {
						out = append(out, Redundant{SessionID: s.ID, TaskID: t.ID, Turn: u.N, Tool: c.Name, CallID: c.CallID,
							ResourceID: c.ResourceID, FirstTurn: r.turn, FirstCallID: r.call})
						continue
					}
					seen[c.ResourceID] = read{u.N, c.CallID}
				case c.StateEffect == "read":
					// A read of an undeclared resource changes nothing.
				case c.ResourceID != "":
					delete(seen, c.ResourceID)
				default:
					clear(seen)
				}
			}
		}
	}
	return out
}

// NewReport totals sessions, in the order given.
func NewReport(sessions []*Session) Report {
	r := Report{Sessions: []SessionTotals{}, Statuses: map[string]int{}, Redundant: []Redundant{}}
	for _, s := range sessions {
		st := SessionTotals{ID: s.ID, Capsule: s.Capsule, ExitStatus: s.ExitStatus, Tasks: len(s.Tasks),
			Turns: s.Turns, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, Charged: s.Charged, DurationMS: s.DurationMS}
		if s.ExitStatus == "" {
			// No session_end: count what the trace holds.
			st.Turns, st.InputTokens, st.OutputTokens = 0, 0, 0
			for _, t := range s.Tasks {
				for _, u := range t.Turns {
					if u.StopReason != "" || u.Error != "" || u.InputTokens > 0 {
						st.Turns++
					}
					st.InputTokens += u.InputTokens
					st.OutputTokens += u.OutputTokens
				}
			}
		}
		for _, t := range s.Tasks {
			for _, u := range t.Turns {
				for _, c := range u.Tools {
					st.ToolCalls++
					if c.Status != "passed" {
						st.FailedCalls++
					}
				}
			}
		}
		red := s.Redundant()
		st.Redundant = len(red)
		r.Redundant = append(r.Redundant, red...)
		r.Sessions = append(r.Sessions, st)
		r.Turns += st.Turns
		r.InputTokens += st.InputTokens
		r.OutputTokens += st.OutputTokens
		r.Charged += st.Charged
		r.DurationMS += st.DurationMS
		r.ToolCalls += st.ToolCalls
		r.FailedCalls += st.FailedCalls
		r.Statuses[s.ExitStatus]++
	}
	return r
}
