package component

import (
	"context"
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/wasm/cm"
)

// HookOutput is the hook-output variant a lifecycle handler returns. Case
// is the WIT case name; the payload field for that case is set.
type HookOutput struct {
	Case      string         // none, replace-context, write-manifests, artifact, reopen-task
	Messages  []Message      // replace-context
	Manifests []ToolManifest // write-manifests
	Text      string         // artifact, reopen-task
}

// The hook-output cases.
const (
	OutNone           = "none"
	OutReplaceContext = "replace-context"
	OutWriteManifests = "write-manifests"
	OutArtifact       = "artifact"
	OutReopenTask     = "reopen-task"
)

// HookError is an Err(string) a handler returned: logged, never fatal.
type HookError struct {
	Handler string
	Msg     string
}

func (e *HookError) Error() string { return e.Handler + ": " + e.Msg }

// Handler names of murmur:hook/lifecycle@0.5.0.
const (
	OnStage        = "on-stage"
	OnSessionStart = "on-session-start"
	OnTaskStart    = "on-task-start"
	OnInference    = "on-inference"
	OnToolCall     = "on-tool-call"
	OnShell        = "on-shell"
	OnCompaction   = "on-compaction"
	OnTaskEnd      = "on-task-end"
	OnSessionEnd   = "on-session-end"
)

// HookHandlers lists every handler; optional ones may be absent.
var HookHandlers = []struct {
	Name     string
	Optional bool
}{
	{OnStage, false}, {OnSessionStart, false}, {OnTaskStart, true}, {OnInference, false},
	{OnToolCall, false}, {OnShell, false}, {OnCompaction, false}, {OnTaskEnd, true}, {OnSessionEnd, false},
}

// Hook is an instantiated hook component's lifecycle export.
type Hook struct {
	inst  *Instance
	funcs map[string]*cm.Func
}

// Hook resolves murmur:hook/lifecycle@0.5.0 exactly. on-task-start and
// on-task-end are optional; a missing other handler fails naming it.
func (i *Instance) Hook() (*Hook, error) {
	funcs, err := resolveHandlers(i.Name, func(fn string) (*cm.Func, error) { return i.export(IfaceLifecycle, fn) })
	if err != nil {
		return nil, err
	}
	return &Hook{inst: i, funcs: funcs}, nil
}

// resolveHandlers applies the hook loading rules to lookup: the
// interface must be there at exactly its version, on-task-start and
// on-task-end may be missing from it, and every other handler is required.
func resolveHandlers(name string, lookup func(fn string) (*cm.Func, error)) (map[string]*cm.Func, error) {
	funcs := map[string]*cm.Func{}
	for _, hd := range HookHandlers {
		f, err := lookup(hd.Name)
		switch {
		case err == nil:
			funcs[hd.Name] = f
		case !errors.Is(err, errMissingFunc):
			return nil, err
		case hd.Optional:
			// An older hook without the optional handler loads and is
			// simply never dispatched for it.
		default:
			return nil, fmt.Errorf("%w: hook %q does not export %s#%s", ErrMissingHandler, name, IfaceLifecycle, hd.Name)
		}
	}
	return funcs, nil
}

// Has reports whether the hook exports handler name.
func (h *Hook) Has(name string) bool { return h.funcs[name] != nil }

// Call dispatches handler name with event (one of the *Event records, or
// SessionContext for on-session-start). A handler the hook does not
// export returns none. A guest Err comes back as *HookError.
func (h *Hook) Call(ctx context.Context, name string, event any) (HookOutput, error) {
	f := h.funcs[name]
	if f == nil {
		return HookOutput{Case: OutNone}, nil
	}
	v, err := f.Call(ctx, lower(event))
	if err != nil {
		return HookOutput{}, fmt.Errorf("hook %q %s: %w", h.inst.Name, name, err)
	}
	p, _ := v.Payload()
	if !v.IsOK() {
		return HookOutput{}, &HookError{Handler: name, Msg: p.Str()}
	}
	return liftHookOutput(p)
}

func liftHookOutput(v cm.Val) (HookOutput, error) {
	if v.Kind() != cm.KindVariant {
		return HookOutput{}, fmt.Errorf("component: hook-output: guest returned %s", v.Kind())
	}
	out := HookOutput{Case: v.Str()}
	p, has := v.Payload()
	var err error
	switch out.Case {
	case OutNone:
	case OutReplaceContext:
		if has {
			err = lift(p, &out.Messages)
		}
	case OutWriteManifests:
		if has {
			err = lift(p, &out.Manifests)
		}
	case OutArtifact, OutReopenTask:
		out.Text = p.Str()
	default:
		err = fmt.Errorf("component: hook-output: unknown case %q", out.Case)
	}
	return out, err
}
