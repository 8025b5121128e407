package agent

import (
	"fmt"
	"sort"

	"github.com/murmur/mur/internal/diag"
)

// ModelLimits is one entry of a driver's models: table.
type ModelLimits struct {
	MaxOutputTokens int64 `json:"max_output_tokens"`
	ContextWindow   int64 `json:"context_window"`
	MaxInputTokens  int64 `json:"max_input_tokens,omitempty"`
}

// Choice is one driver choice: the primary ("inference") or an alternate
// ("inference.alternates[i]").
type Choice struct {
	Name   string
	Driver string
	Model  string
	// Table is the driver's own models: block.
	Table map[string]ModelLimits
}

// Where a limit came from, as model_limits records it.
const (
	SourceManifestMaxTokens = "inference.max_tokens"
	SourceManifestContext   = "context.max_tokens"
	SourceTableOutput       = "models.max_output_tokens"
	SourceTableWindow       = "models.context_window"
	SourceTableInput        = "models.max_input_tokens"
	BasisInputCeiling       = "max_input_tokens"
	BasisWindowLessCap      = "context_window_less_output_cap"
)

// Limits are one choice's resolved numbers, recorded in
// session_start.model_limits. Zero means "none".
type Limits struct {
	Choice        string `json:"choice"`
	Driver        string `json:"driver"`
	Model         string `json:"model"`
	OutputCap     int64  `json:"output_cap"`
	OutputSource  string `json:"output_cap_source"`
	Window        int64  `json:"context_window,omitempty"`
	WindowSource  string `json:"context_window_source,omitempty"`
	Ceiling       int64  `json:"input_ceiling,omitempty"`
	CeilingSource string `json:"input_ceiling_source,omitempty"`
	Budget        int64  `json:"input_budget,omitempty"`
	Basis         string `json:"input_budget_basis,omitempty"`
}

// LimitSettings are the manifest keys limits resolve from; zero is unset.
type LimitSettings struct {
	MaxTokens           int64 // inference.max_tokens
	ContextMaxTokens    int64 // context.max_tokens
	CompactionMaxTokens int64 // inference.compaction.max_tokens
	CompactionModel     string
}

const maxTableValue = 4294967295

// checkTable validates a stored driver's models: block: a malformed one
// refuses the launch with E-RUN-052 naming the driver and the field.
func checkTable(c Choice) diag.List {
	var l diag.List
	ids := make([]string, 0, len(c.Table))
	for id := range c.Table {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	bad := func(field, why string) {
		l = append(l, diag.New(diag.Code("E-RUN-052"), diag.Pos{}, field,
			fmt.Sprintf("driver %q declares a malformed models: table: %s %s; rebuild the driver with a valid models: block", c.Driver, field, why)))
	}
	for _, id := range ids {
		m := c.Table[id]
		if id == "" {
			bad("models", "has an empty model id")
		}
		if m.MaxOutputTokens < 1 || m.MaxOutputTokens > maxTableValue {
			bad("models."+id+".max_output_tokens", "must be 1 to 4294967295")
		}
		if m.ContextWindow < 1 || m.ContextWindow > maxTableValue {
			bad("models."+id+".context_window", "must be 1 to 4294967295")
		}
		if m.MaxInputTokens < 0 || m.MaxInputTokens > maxTableValue || (m.MaxInputTokens > 0 && m.MaxInputTokens > m.ContextWindow) {
			bad("models."+id+".max_input_tokens", "must be 1 to 4294967295 and at most context_window")
		}
	}
	return l
}

// ResolveLimits resolves each choice's output cap, window, input ceiling
// and budget once at launch. Errors refuse the launch (E-RUN-052, 054,
// 055); warnings (W-RUN-009) are printed and the launch goes on.
func ResolveLimits(choices []Choice, s LimitSettings) ([]Limits, diag.List) {
	var out []Limits
	var l diag.List
	for i, c := range choices {
		if tl := checkTable(c); len(tl) > 0 {
			l = append(l, tl...)
			continue
		}
		r := Limits{Choice: c.Name, Driver: c.Driver, Model: c.Model}
		entry, listed := c.Table[c.Model]
		switch {
		case s.MaxTokens > 0:
			r.OutputCap, r.OutputSource = s.MaxTokens, SourceManifestMaxTokens
		case listed:
			r.OutputCap, r.OutputSource = entry.MaxOutputTokens, SourceTableOutput
		default:
			l = append(l, diag.New(diag.Code("E-RUN-052"), diag.Pos{}, "inference.max_tokens",
				fmt.Sprintf("driver choice %s (model %q on driver %q) has no output cap: the driver's models: table does not list the model; set inference.max_tokens", c.Name, c.Model, c.Driver)))
			continue
		}
		switch {
		case s.ContextMaxTokens > 0:
			r.Window, r.WindowSource = s.ContextMaxTokens, SourceManifestContext
		case listed:
			r.Window, r.WindowSource = entry.ContextWindow, SourceTableWindow
		}
		if listed && entry.MaxInputTokens > 0 {
			r.Ceiling, r.CeilingSource = entry.MaxInputTokens, SourceTableInput
		}
		if r.Window > 0 {
			if r.OutputCap >= r.Window {
				l = append(l, diag.New(diag.Code("E-RUN-055"), diag.Pos{}, "inference.max_tokens",
					fmt.Sprintf("driver choice %s (model %q) has no input budget: output cap %d is at or above the context window %d (input ceiling %s); lower inference.max_tokens or raise context.max_tokens",
						c.Name, c.Model, r.OutputCap, r.Window, ceilingText(r.Ceiling))))
				continue
			}
			r.Budget, r.Basis = r.Window-r.OutputCap, BasisWindowLessCap
			if r.Ceiling > 0 && r.Ceiling <= r.Budget {
				r.Budget, r.Basis = r.Ceiling, BasisInputCeiling
			}
		}
		if !listed && !(s.MaxTokens > 0 && s.ContextMaxTokens > 0) {
			l = append(l, diag.New(diag.Code("W-RUN-009"), diag.Pos{}, "inference.model",
				fmt.Sprintf("driver %q's models: table does not list model %q (driver choice %s); its limits come from inference.max_tokens and context.max_tokens only", c.Driver, c.Model, c.Name)))
		}
		if i == 0 && s.CompactionMaxTokens > 0 {
			l = append(l, checkCompaction(c, s)...)
		}
		out = append(out, r)
	}
	return out, l
}

// checkCompaction applies E-RUN-054 and E-RUN-055 to
// inference.compaction.max_tokens against the primary driver's table.
func checkCompaction(primary Choice, s LimitSettings) diag.List {
	model := s.CompactionModel
	if model == "" {
		model = primary.Model
	}
	entry, listed := primary.Table[model]
	var l diag.List
	if listed && s.CompactionMaxTokens > entry.MaxOutputTokens {
		l = append(l, diag.New(diag.Code("E-RUN-054"), diag.Pos{}, "inference.compaction.max_tokens",
			fmt.Sprintf("%d is above the %d max_output_tokens driver %q declares for compaction model %q; lower inference.compaction.max_tokens", s.CompactionMaxTokens, entry.MaxOutputTokens, primary.Driver, model)))
	}
	window := s.ContextMaxTokens
	if window == 0 && listed {
		window = entry.ContextWindow
	}
	if window > 0 && s.CompactionMaxTokens >= window {
		l = append(l, diag.New(diag.Code("E-RUN-055"), diag.Pos{}, "inference.compaction.max_tokens",
			fmt.Sprintf("compaction calls have no input budget: output cap %d is at or above compaction model %q's context window %d; lower inference.compaction.max_tokens", s.CompactionMaxTokens, model, window)))
	}
	return l
}

func ceilingText(n int64) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}
