package capsule

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
)

// loopRef hands the session's loop, once built, to the run-inference
// import of the components instantiated before it (hooks load before the
// loop exists; tools are built before the session).
type loopRef struct {
	p atomic.Pointer[agent.Loop]
	// script is set for a script capsule, which has no model to call.
	script atomic.Bool
}

func (r *loopRef) set(l *agent.Loop) { r.p.Store(l) }

// inferenceFor serves murmur:runtime/inference run-inference to one
// component: the hook or tool named by origin ("hook:<name>",
// "tool:<name>").
func (r *loopRef) inferenceFor(origin string) component.Inferencer {
	return &runInference{ref: r, origin: origin}
}

// runInference is one component's run-inference: one completion through
// the session loop's Infer, the path of the agent's own turns.
type runInference struct {
	ref    *loopRef
	origin string
}

// errNoLoopYet is run-inference called before the session's loop exists
// (on-stage runs before it).
var errNoLoopYet = errors.New("run-inference: the session's inference is not open yet at this point (on-stage runs before it); nothing was sent")

// errNoModel is run-inference in a script capsule: it declares no
// inference block, so there is no driver to send through.
var errNoModel = errors.New("run-inference: this is a script capsule (an artifacts entry is runtime: capsule), which declares no inference block and runs no model; nothing was sent")

func (i *runInference) RunInference(ctx context.Context, req component.InferenceRequest) (component.InferenceResponse, error) {
	l := i.ref.p.Load()
	if i.ref.script.Load() {
		return component.InferenceResponse{}, errNoModel
	}
	if l == nil {
		return component.InferenceResponse{}, errNoLoopYet
	}
	r := agent.InferRequest{Origin: i.origin, System: req.SystemPrompt, Model: req.Model}
	for _, m := range req.Messages {
		r.Messages = append(r.Messages, agent.TextMessage{Role: m.Role, Content: m.Content})
	}
	resp, err := l.Infer(ctx, r)
	if err != nil {
		return component.InferenceResponse{}, err
	}
	return component.InferenceResponse{Text: resp.Text, ModelUsed: resp.ModelUsed,
		InputTokens: uint64(max(resp.InputTokens, 0)), OutputTokens: uint64(max(resp.OutputTokens, 0))}, nil
}

// origin names a component on its inference records.
func origin(kind, name string) string { return kind + ":" + strings.TrimSpace(name) }
