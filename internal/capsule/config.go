package capsule

import (
	"encoding/json"
	"fmt"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
	"github.com/murmur/mur/internal/trace"
)

// agentConfig maps the capsule manifest (defaults applied) onto what the
// loop reads. Model limits come from the manifest engine's one resolver
// (manifest.ResolveLimits) against the installed drivers' models: tables;
// staging has already refused any choice it cannot resolve, so its
// diagnostics are not repeated here.
func agentConfig(c *manifest.Capsule, inst manifest.Installed) (agent.Config, error) {
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
	cfg.ModelLimits, _ = manifest.ResolveLimits(c, inst)
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
			cfg.KeepWorking = kw
		}
		cfg.DoneCheck = lc.DoneCheck
		if lc.DeadlineNoticeSecs != nil {
			n := int(*lc.DeadlineNoticeSecs)
			cfg.DeadlineNoticeSecs = &n
		}
	}
	return cfg, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// retention is trace.retain, which the session applies to the capsule's
// older sessions at launch; nil deletes nothing, ever.
func retention(c *manifest.Capsule) (*session.Retain, error) {
	if c.Trace == nil || c.Trace.Retain == nil {
		return nil, nil
	}
	r := c.Trace.Retain
	ret := &session.Retain{MaxSessions: int(deref(r.MaxSessions))}
	if r.MaxAge != "" {
		d, err := manifest.ParseDuration(r.MaxAge, "smhd")
		if err != nil {
			return nil, fmt.Errorf("trace.retain.max_age: %w", err)
		}
		ret.MaxAge = d
	}
	return ret, nil
}
