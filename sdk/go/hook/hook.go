// Package hook writes a murmur hook (world murmur:runtime/hook@0.2.0,
// exporting murmur:hook/lifecycle@0.5.0) as ordinary Go:
//
//	func init() {
//		hook.Run(hook.Handlers{
//			OnToolCall: func(e hook.ToolEvent) (hook.Output, error) {
//				log.Printf("tool %s took %d ms", e.ToolName, e.DurationMS)
//				return hook.None(), nil
//			},
//		})
//	}
//
//	func main() {}
//
// A handler left nil answers none, which is silent for every event. An
// error becomes the handler's err(string), which the runtime logs to
// logs/hook-<name>.log without aborting the loop. Which Output arm the
// runtime honours per event is fixed (see docs/wit.md); any other non-none
// arm is discarded with a logged fault.
package hook

import "fmt"

// Message is one conversation message.
type Message struct {
	Role    string
	Content string
}

// ToolManifest is a manifest written for a tool binary at staging.
type ToolManifest struct {
	BinaryName string
	Content    string
}

// Kind names the case of an Output, in WIT order (the order is the ABI).
type Kind uint8

// The hook-output cases.
const (
	KindNone Kind = iota
	KindReplaceContext
	KindWriteManifests
	KindArtifact
	KindReopenTask
)

// Output is murmur:hook/lifecycle's hook-output variant. Build one with
// None, ReplaceContext, WriteManifests, Artifact or ReopenTask.
type Output struct {
	Kind      Kind
	Messages  []Message      // KindReplaceContext
	Manifests []ToolManifest // KindWriteManifests
	Text      string         // KindArtifact, KindReopenTask
}

// None is the silent output.
func None() Output { return Output{} }

// ReplaceContext replaces the message history; honoured from on-compaction.
func ReplaceContext(msgs []Message) Output {
	return Output{Kind: KindReplaceContext, Messages: msgs}
}

// WriteManifests writes tool manifests; honoured from on-stage.
func WriteManifests(ms []ToolManifest) Output {
	return Output{Kind: KindWriteManifests, Manifests: ms}
}

// Artifact records an artifact; honoured from on-inference.
func Artifact(s string) Output { return Output{Kind: KindArtifact, Text: s} }

// ReopenTask re-runs the task with feedback; honoured from on-task-end.
func ReopenTask(feedback string) Output { return Output{Kind: KindReopenTask, Text: feedback} }

// StageEvent is sent once at capsule staging.
type StageEvent struct{ ShellAllow []string }

// SessionContext is sent once per capsule launch.
type SessionContext struct {
	CapsuleName    string
	CapsuleVersion string
	SessionID      string
	Model          string
	Capabilities   []string
}

// TaskStartEvent is sent once per task, before its first turn.
type TaskStartEvent struct {
	TaskID     string
	ContextID  string
	Source     string
	InputBytes uint64
}

// TaskEndEvent is sent once per task, after its agent loop returns.
type TaskEndEvent struct {
	TaskID     string
	ExitStatus string
}

// InferenceEvent is sent after each driver response is parsed.
type InferenceEvent struct {
	Turn         uint32
	InputTokens  uint64
	OutputTokens uint64
	Decision     string
	ToolName     *string
	Prompt       *string
	Output       *string
	Tools        *string
}

// ToolEvent is sent after each model-requested tool call.
type ToolEvent struct {
	Turn        uint32
	ToolName    string
	InputBytes  uint64
	OutputBytes uint64
	DurationMS  uint64
	Status      string
}

// ShellEvent is sent after each allowed shell command.
type ShellEvent struct {
	Turn        uint32
	Binary      string
	Command     string
	ExitCode    int32
	Stdout      string
	Stderr      string
	StdoutBytes uint64
	StderrBytes uint64
	DurationMS  uint64
}

// CompactionEvent is sent after a compaction updates the history.
type CompactionEvent struct {
	Messages      []Message
	SessionTokens uint64
	Threshold     float64
	Model         *string
	SystemPrompt  *string
}

// SessionEndEvent is sent once per capsule launch, after the task loop.
type SessionEndEvent struct {
	TotalTurns        uint32
	TotalInputTokens  uint64
	TotalOutputTokens uint64
	TotalToolCalls    uint32
	TotalShellCalls   uint32
	DurationMS        uint64
	ExitStatus        string
}

// Handlers holds one function per lifecycle event; nil ones answer none.
type Handlers struct {
	OnStage        func(StageEvent) (Output, error)
	OnSessionStart func(SessionContext) (Output, error)
	OnTaskStart    func(TaskStartEvent) (Output, error)
	OnInference    func(InferenceEvent) (Output, error)
	OnToolCall     func(ToolEvent) (Output, error)
	OnShell        func(ShellEvent) (Output, error)
	OnCompaction   func(CompactionEvent) (Output, error)
	OnTaskEnd      func(TaskEndEvent) (Output, error)
	OnSessionEnd   func(SessionEndEvent) (Output, error)
}

var handlers *Handlers

// Run registers the component's lifecycle handlers. Call it once, from
// init.
func Run(h Handlers) {
	if handlers != nil {
		panic("hook.Run called twice")
	}
	handlers = &h
}

// dispatch calls f with e when the handler is set, and answers none when
// it is not.
func dispatch[E any](f func(E) (Output, error), e E) (Output, error) {
	if f == nil {
		return None(), nil
	}
	out, err := f(e)
	if err == nil && out.Kind > KindReopenTask {
		return Output{}, fmt.Errorf("hook output kind %d is not a hook-output case", out.Kind)
	}
	return out, err
}

func current() *Handlers {
	if handlers == nil {
		return &Handlers{}
	}
	return handlers
}
