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

import (
	"fmt"

	"github.com/murmur/mur/sdk/go/inference"
)

// Message is one conversation message (the same record run-inference
// sends).
type Message = inference.Message

// ToolManifest is a manifest written for a tool binary at staging.
type ToolManifest struct {
	BinaryName string `json:"binary_name"`
	Content    string `json:"content"`
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
	Kind      Kind           `json:"kind"`
	Messages  []Message      `json:"messages"`  // KindReplaceContext
	Manifests []ToolManifest `json:"manifests"` // KindWriteManifests
	Text      string         `json:"text"`      // KindArtifact, KindReopenTask
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
type StageEvent struct {
	ShellAllow []string `json:"shell_allow"`
}

// SessionContext is sent once per capsule launch.
type SessionContext struct {
	CapsuleName    string   `json:"capsule_name"`
	CapsuleVersion string   `json:"capsule_version"`
	SessionID      string   `json:"session_id"`
	Model          string   `json:"model"`
	Capabilities   []string `json:"capabilities"`
}

// TaskStartEvent is sent once per task, before its first turn.
type TaskStartEvent struct {
	TaskID     string `json:"task_id"`
	ContextID  string `json:"context_id"`
	Source     string `json:"source"`
	InputBytes uint64 `json:"input_bytes"`
}

// TaskEndEvent is sent once per task, after its agent loop returns.
type TaskEndEvent struct {
	TaskID     string `json:"task_id"`
	ExitStatus string `json:"exit_status"`
}

// InferenceEvent is sent after each driver response is parsed.
type InferenceEvent struct {
	Turn         uint32  `json:"turn"`
	InputTokens  uint64  `json:"input_tokens"`
	OutputTokens uint64  `json:"output_tokens"`
	Decision     string  `json:"decision"`
	ToolName     *string `json:"tool_name"`
	Prompt       *string `json:"prompt"`
	Output       *string `json:"output"`
	Tools        *string `json:"tools"`
}

// ToolEvent is sent after each model-requested tool call.
type ToolEvent struct {
	Turn        uint32 `json:"turn"`
	ToolName    string `json:"tool_name"`
	InputBytes  uint64 `json:"input_bytes"`
	OutputBytes uint64 `json:"output_bytes"`
	DurationMS  uint64 `json:"duration_ms"`
	Status      string `json:"status"`
}

// ShellEvent is sent after each allowed shell command.
type ShellEvent struct {
	Turn        uint32 `json:"turn"`
	Binary      string `json:"binary"`
	Command     string `json:"command"`
	ExitCode    int32  `json:"exit_code"`
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	StdoutBytes uint64 `json:"stdout_bytes"`
	StderrBytes uint64 `json:"stderr_bytes"`
	DurationMS  uint64 `json:"duration_ms"`
}

// CompactionEvent is sent after a compaction updates the history.
type CompactionEvent struct {
	Messages      []Message `json:"messages"`
	SessionTokens uint64    `json:"session_tokens"`
	Threshold     float64   `json:"threshold"`
	Model         *string   `json:"model"`
	SystemPrompt  *string   `json:"system_prompt"`
}

// SessionEndEvent is sent once per capsule launch, after the task loop.
type SessionEndEvent struct {
	TotalTurns        uint32 `json:"total_turns"`
	TotalInputTokens  uint64 `json:"total_input_tokens"`
	TotalOutputTokens uint64 `json:"total_output_tokens"`
	TotalToolCalls    uint32 `json:"total_tool_calls"`
	TotalShellCalls   uint32 `json:"total_shell_calls"`
	DurationMS        uint64 `json:"duration_ms"`
	ExitStatus        string `json:"exit_status"`
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
