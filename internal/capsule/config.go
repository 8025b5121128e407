package capsule

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

// agentConfig maps the capsule manifest (defaults applied) and the
// driver's own models: table onto what the loop reads.
//
// artifact looks up a staged artifact's manifest: each of
// inference.alternates is resolved for its limits against its own driver's
// models: table, as the primary is, so a launch refuses an alternate
// without an output cap or input budget (E-RUN-052, E-RUN-055) and
// session_start's model_limits lists every choice.
func agentConfig(c *manifest.Capsule, driver *manifest.Artifact, artifact func(name string) (*manifest.Artifact, bool)) (agent.Config, error) {
	inf := c.Inference
	cfg := agent.Config{Capsule: c.Name, Model: inf.Model}
	if inf.Driver != nil {
		cfg.DriverName = inf.Driver.Artifact
		if inf.Driver.Config != nil {
			b, err := inf.Driver.Config.JSON()
			if err != nil {
				return cfg, fmt.Errorf("inference.driver.config: %w", err)
			}
			cfg.DriverConfig = json.RawMessage(b)
		}
	}
	if driver != nil {
		cfg.ModelTable = modelTable(driver)
	}
	for _, a := range inf.Alternates {
		ch := agent.Choice{Name: a.Name, Driver: a.Driver.Artifact, Model: a.Model}
		if own, ok := artifact(a.Driver.Artifact); ok && own != nil {
			ch.Table = modelTable(own)
		}
		cfg.Alternates = append(cfg.Alternates, ch)
	}
	cfg.Limits.MaxTokens = deref(inf.MaxTokens)
	if c.Context != nil {
		cfg.Limits.ContextMaxTokens = deref(c.Context.MaxTokens)
	}
	if inf.Compaction != nil {
		cfg.Limits.CompactionMaxTokens = deref(inf.Compaction.MaxTokens)
		cfg.Limits.CompactionModel = inf.Compaction.Model
	}
	cfg.MaxTurns = int(deref(inf.MaxTurns))
	cfg.MaxSessionTokens = deref(inf.MaxSessionTokens)
	if r := inf.Retry; r != nil {
		rc := agent.DefaultRetry
		if r.MaxRetries != nil {
			rc.MaxRetries = int(*r.MaxRetries)
		}
		if r.InitialDelayMS != nil {
			rc.InitialDelayMs = *r.InitialDelayMS
		}
		if r.MaxDelayMS != nil {
			rc.MaxDelayMs = *r.MaxDelayMS
		}
		cfg.Retry = &rc
	}
	if c.Trace != nil {
		capture, err := trace.ParseCapture(c.Trace.Capture)
		if err != nil {
			return cfg, fmt.Errorf("trace.capture: %w", err)
		}
		cfg.Capture = capture
		if r := c.Trace.Retain; r != nil {
			ret := &session.Retain{MaxSessions: int(deref(r.MaxSessions))}
			if r.MaxAge != "" {
				d, err := manifest.ParseDuration(r.MaxAge, "smhd")
				if err != nil {
					return cfg, fmt.Errorf("trace.retain.max_age: %w", err)
				}
				ret.MaxAge = d
			}
			cfg.Retain = ret
		}
	}
	if inf.SystemPrompt != nil {
		cfg.Prompt.Inline = *inf.SystemPrompt
	}
	cfg.Prompt.File = inf.SystemPromptFile
	cfg.Prompt.ArtifactName = inf.SystemPromptArtifact
	cfg.InstructionFiles = inf.InstructionFiles
	cfg.ToolRefresh = inf.ToolRefresh
	if lc := c.Lifecycle; lc != nil {
		if kw := lc.KeepWorking; kw != nil {
			cfg.KeepWorking = &agent.KeepWorking{Message: kw.Message, Limit: int(kw.Limit)}
		}
		if dc := lc.DoneCheck; dc != nil {
			d := &agent.DoneCheck{Command: dc.Command, Limit: int(dc.Limit)}
			if dc.TimeoutSecs != nil {
				d.Timeout = time.Duration(*dc.TimeoutSecs) * time.Second
			}
			cfg.DoneCheck = d
		}
		if lc.DeadlineNoticeSecs != nil {
			n := int(*lc.DeadlineNoticeSecs)
			cfg.DeadlineNoticeSecs = &n
		}
	}
	return cfg, nil
}

// modelTable converts a driver's models: block.
func modelTable(a *manifest.Artifact) map[string]agent.ModelLimits {
	if len(a.Models) == 0 {
		return nil
	}
	t := make(map[string]agent.ModelLimits, len(a.Models))
	for id, m := range a.Models {
		t[id] = agent.ModelLimits{MaxOutputTokens: m.MaxOutputTokens, ContextWindow: m.ContextWindow, MaxInputTokens: deref(m.MaxInputTokens)}
	}
	return t
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
