package component

import (
	"context"
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/wasi"
	"github.com/murmur/mur/internal/wasm/cm"
)

// The murmur host imports, one Go interface each. The features implement
// them (the agent loop, the shell tools, the A2A door, hooks); a store
// whose Host leaves one nil answers that import with the "not granted" /
// "not available in this context" error the spec gives, so every world
// links whatever the capsule grants. murmur:artifact-manager is served
// to script capsules (manage.go); without capabilities.install its calls
// answer not granted.

// TextSink receives murmur:text/chunks@0.1.0 emit calls of the call in
// progress. Emit returns an error once nobody follows the call.
type TextSink interface {
	Emit(text string) error
}

// TextChan delivers chunks to a Go channel; Emit fails once the context
// is done, telling the guest nobody follows the call any more.
type TextChan struct {
	Ctx context.Context
	C   chan<- string
}

// Emit sends text on the channel, ignoring empty pieces.
func (t TextChan) Emit(text string) error {
	if text == "" {
		return nil
	}
	select {
	case t.C <- text:
		return nil
	case <-t.Ctx.Done():
		return fmt.Errorf("nobody follows this call any more: %w", t.Ctx.Err())
	}
}

// InputRequester serves murmur:task/task@0.1.0 request-input: it suspends
// the agent loop until a message/send delivers the reply.
type InputRequester interface {
	RequestInput(ctx context.Context, prompt string) (string, error)
}

// ToolInvoker serves murmur:tool-registry/invoke@0.1.0.
type ToolInvoker interface {
	Invoke(ctx context.Context, name string, in ToolInput) (ToolResult, error)
}

// Inferencer serves murmur:runtime/inference@0.2.0 run-inference.
type Inferencer interface {
	RunInference(ctx context.Context, req InferenceRequest) (InferenceResponse, error)
}

// MessageSender serves murmur:message/send@0.1.0.
type MessageSender interface {
	Send(ctx context.Context, peerURL string, m PeerMessage) (PeerTaskResult, error)
}

// ShellExecutor serves murmur:shell/execute@0.1.0. A non-zero exit is
// data in ShellResult; the error is for spawn and I/O failures and for a
// binary outside capabilities.shell.allow.
type ShellExecutor interface {
	Run(ctx context.Context, binary string, args []string, env []Pair) (ShellResult, error)
}

// TaskReader serves murmur:task-io/read@0.1.0; ConversationReader serves
// murmur:conversation/read@0.1.0. Their errors are ReadError values.
type TaskReader interface {
	Current(ctx context.Context) (TaskText, error)
}

// ConversationReader reads the durable conversation record.
type ConversationReader interface {
	ReadPage(ctx context.Context, contextID *string, start uint64, limit uint32) (ConversationPage, error)
}

// ReadError is a read-error variant case of task-io/read and
// conversation/read: Case is "not-granted", "no-task" or "no-context".
type ReadError struct {
	Case string
	Msg  string
}

func (e *ReadError) Error() string { return e.Case + ": " + e.Msg }

// Host holds one store's implementations of the murmur imports.
type Host struct {
	Text         TextSink
	Input        InputRequester
	Tools        ToolInvoker
	Inference    Inferencer
	Messages     MessageSender
	Shell        ShellExecutor
	TaskIO       TaskReader
	Conversation ConversationReader
	Artifacts    ArtifactManager
}

// guestInferenceKey marks the context of a guest's run-inference call:
// the driver call it makes streams into no live text (see emit).
type guestInferenceKey struct{}

// ErrNotAvailable is the kind of a host import called where the capsule
// did not grant it or the context cannot serve it.
var ErrNotAvailable = errors.New("not available in this context")

// ErrLifecycleImport is a call to a function of an imported
// murmur:hook/lifecycle: a hook exports that interface; the host only
// links its functions (see defineHost) and never serves them.
var ErrLifecycleImport = errors.New("murmur:hook/lifecycle is exported by hooks; the host does not serve its functions as imports")

// ErrToolRunImport is a call to an imported murmur:tool/run#run: tools
// export it; the host links it only so that a JS guest instantiates.
var ErrToolRunImport = errors.New("murmur:tool/run is exported by tools; the host does not serve run as an import")

// storeData is every store's data: the WASI context and the murmur host.
type storeData struct {
	wasi *wasi.Ctx
	host *Host
}

// WASI implements wasi.StoreCtx.
func (d *storeData) WASI() *wasi.Ctx { return d.wasi }

func hostOf(c *cm.Caller) *Host {
	if d, ok := c.Data().(*storeData); ok && d.host != nil {
		return d.host
	}
	return &Host{}
}

// Interface names, at exactly the versions the spec lists.
const (
	IfaceToolRun      = "murmur:tool/run@0.1.0"
	IfaceCapsuleRun   = "murmur:capsule/run@0.1.0"
	IfaceLifecycle    = "murmur:hook/lifecycle@0.5.0"
	IfaceChunks       = "murmur:text/chunks@0.1.0"
	IfaceTask         = "murmur:task/task@0.1.0"
	IfaceToolRegistry = "murmur:tool-registry/invoke@0.1.0"
	IfaceInference    = "murmur:runtime/inference@0.2.0"
	IfaceMessage      = "murmur:message/send@0.1.0"
	IfaceShell        = "murmur:shell/execute@0.1.0"
	IfaceTaskIO       = "murmur:task-io/read@0.1.0"
	IfaceConversation = "murmur:conversation/read@0.1.0"
)

func okOrErr(v any, err error) cm.Val {
	if err != nil {
		return cm.Err(cm.String(err.Error()))
	}
	if v == nil {
		return cm.OK()
	}
	return cm.OK(lower(v))
}

func readErr(err error) cm.Val {
	var re *ReadError
	if errors.As(err, &re) {
		return cm.Err(cm.Variant(re.Case, cm.String(re.Msg)))
	}
	return cm.Err(cm.Variant("not-granted", cm.String(err.Error())))
}

// defineHost registers every murmur host import on l.
func defineHost(l *cm.Linker) {
	at := func(iface string) []string { return []string{iface} }
	defineManage(l)

	l.Func(at(IfaceChunks), "emit", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Text == nil {
			return cm.Err(cm.String("no call in progress follows text chunks")), nil
		}
		if c.Context().Value(guestInferenceKey{}) != nil {
			// The driver is answering a guest's run-inference: its text
			// goes back whole to the guest, never into the task's live
			// text, which carries only the agent's own turns.
			return cm.OK(), nil
		}
		if err := h.Text.Emit(a[0].Str()); err != nil {
			return cm.Err(cm.String(err.Error())), nil
		}
		return cm.OK(), nil
	})

	// request-input returns a bare string, so a refusal can only trap: the
	// guest aborts and the task fails, as the spec says for a timeout.
	l.Func(at(IfaceTask), "request-input", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Input == nil {
			return cm.Val{}, fmt.Errorf("murmur:task/task request-input: %w: it is only available in the tool world while the capsule runs an A2A task", ErrNotAvailable)
		}
		reply, err := h.Input.RequestInput(c.Context(), a[0].Str())
		if err != nil {
			return cm.Val{}, fmt.Errorf("murmur:task/task request-input: %w", err)
		}
		return cm.String(reply), nil
	})

	l.Func(at(IfaceToolRegistry), "invoke", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Tools == nil {
			return cm.Err(cm.String("tool-registry/invoke: " + ErrNotAvailable.Error())), nil
		}
		var in ToolInput
		if err := lift(a[1], &in); err != nil {
			return cm.Val{}, err
		}
		r, err := h.Tools.Invoke(c.Context(), a[0].Str(), in)
		return okOrErr(r, err), nil
	})

	// componentize-js keeps an imported interface whole, so a JS guest
	// importing tool-registry/invoke (a script capsule) also imports
	// murmur:tool/run's run, whose records invoke uses. It is linked so the
	// component instantiates, and traps if called: a tool's run is an
	// export, never something the host serves.
	l.Func(at(IfaceToolRun), "run", func(*cm.Caller, []cm.Val) (cm.Val, error) {
		return cm.Val{}, fmt.Errorf("%s#run: %w", IfaceToolRun, ErrToolRunImport)
	})

	l.Func(at(IfaceInference), "run-inference", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Inference == nil {
			// A session hands this import only to what it serves
			// inference to; elsewhere nothing is sent, whatever the
			// capsule's driver.
			return cm.Err(cm.String("run-inference: " + ErrNotAvailable.Error() + ": this component is served no inference; nothing was sent")), nil
		}
		var req InferenceRequest
		if err := lift(a[0], &req); err != nil {
			return cm.Val{}, err
		}
		r, err := h.Inference.RunInference(context.WithValue(c.Context(), guestInferenceKey{}, true), req)
		return okOrErr(r, err), nil
	})

	l.Func(at(IfaceMessage), "send", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Messages == nil {
			return cm.Err(cm.String("message/send: " + ErrNotAvailable.Error())), nil
		}
		var m PeerMessage
		if err := lift(a[1], &m); err != nil {
			return cm.Val{}, err
		}
		r, err := h.Messages.Send(c.Context(), a[0].Str(), m)
		return okOrErr(r, err), nil
	})

	l.Func(at(IfaceShell), "run", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Shell == nil {
			// A launch hands tool components the session's shell whenever
			// the capsule allows a binary; without one nothing could run.
			return cm.Err(cm.String("shell/execute: not granted: the capsule allows no shell binaries (capabilities.shell.allow)")), nil
		}
		var args []string
		var env []Pair
		if err := lift(a[1], &args); err != nil {
			return cm.Val{}, err
		}
		if err := lift(a[2], &env); err != nil {
			return cm.Val{}, err
		}
		r, err := h.Shell.Run(c.Context(), a[0].Str(), args, env)
		return okOrErr(r, err), nil
	})

	// componentize-js keeps an imported interface whole, so a JS guest
	// importing murmur:runtime/inference imports every function of
	// murmur:hook/lifecycle, whose message record that interface uses.
	// Each is linked so the component instantiates, and traps if called:
	// a guest gets nothing from them, as when they were not linked.
	for _, hd := range HookHandlers {
		fn := hd.Name
		l.Func(at(IfaceLifecycle), fn, func(*cm.Caller, []cm.Val) (cm.Val, error) {
			return cm.Val{}, fmt.Errorf("%s#%s: %w", IfaceLifecycle, fn, ErrLifecycleImport)
		})
	}

	l.Func(at(IfaceTaskIO), "current", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.TaskIO == nil {
			return readErr(&ReadError{"not-granted", "set capabilities.task_io.read: true on this hook's capsule entry"}), nil
		}
		r, err := h.TaskIO.Current(c.Context())
		if err != nil {
			return readErr(err), nil
		}
		return cm.OK(lower(r)), nil
	})

	l.Func(at(IfaceConversation), "read-page", func(c *cm.Caller, a []cm.Val) (cm.Val, error) {
		h := hostOf(c)
		if h.Conversation == nil {
			return readErr(&ReadError{"not-granted", "set capabilities.conversation.read: true on this hook's capsule entry"}), nil
		}
		var ctxID *string
		if err := lift(a[0], &ctxID); err != nil {
			return cm.Val{}, err
		}
		r, err := h.Conversation.ReadPage(c.Context(), ctxID, a[1].U64(), a[2].U32())
		if err != nil {
			return readErr(err), nil
		}
		return cm.OK(lower(r)), nil
	})
}
