package component

// Types of murmur:tool/run@0.1.0.

// Status is the enum status of a tool-result.
type Status string

func (Status) witEnum() {}

// The status cases.
const (
	StatusPassed Status = "passed"
	StatusFailed Status = "failed"
	StatusError  Status = "error"
)

// ToolInput is record tool-input.
type ToolInput struct {
	Data    *string `wit:"data"`
	LogPath *string `wit:"log-path"`
}

// ToolResult is record tool-result.
type ToolResult struct {
	Status    Status  `wit:"status"`
	Summary   *string `wit:"summary"`
	Data      *string `wit:"data"`
	DataPath  *string `wit:"data-path"`
	Truncated bool    `wit:"truncated"`
	Metadata  []Pair  `wit:"metadata"`
}

// Meta returns the first value of metadata key k; the host uses the first
// in list order, as spec 000 says for resource_id.
func (r ToolResult) Meta(k string) (string, bool) {
	for _, p := range r.Metadata {
		if p[0] == k {
			return p[1], true
		}
	}
	return "", false
}

// Types of murmur:hook/lifecycle@0.5.0.

// Message is record message.
type Message struct {
	Role    string `wit:"role"`
	Content string `wit:"content"`
}

// ToolManifest is record tool-manifest.
type ToolManifest struct {
	BinaryName string `wit:"binary-name"`
	Content    string `wit:"content"`
}

// SessionContext is record session-context.
type SessionContext struct {
	CapsuleName    string   `wit:"capsule-name"`
	CapsuleVersion string   `wit:"capsule-version"`
	SessionID      string   `wit:"session-id"`
	Model          string   `wit:"model"`
	Capabilities   []string `wit:"capabilities"`
}

// StageEvent is record stage-event.
type StageEvent struct {
	ShellAllow []string `wit:"shell-allow"`
}

// TaskStartEvent is record task-start-event.
type TaskStartEvent struct {
	TaskID     string `wit:"task-id"`
	ContextID  string `wit:"context-id"`
	Source     string `wit:"source"`
	InputBytes uint64 `wit:"input-bytes"`
}

// TaskEndEvent is record task-end-event.
type TaskEndEvent struct {
	TaskID     string `wit:"task-id"`
	ExitStatus string `wit:"exit-status"`
}

// InferenceEvent is record inference-event.
type InferenceEvent struct {
	Turn         uint32  `wit:"turn"`
	InputTokens  uint64  `wit:"input-tokens"`
	OutputTokens uint64  `wit:"output-tokens"`
	Decision     string  `wit:"decision"`
	ToolName     *string `wit:"tool-name"`
	Prompt       *string `wit:"prompt"`
	Output       *string `wit:"output"`
	Tools        *string `wit:"tools"`
}

// ToolEvent is record tool-event.
type ToolEvent struct {
	Turn        uint32 `wit:"turn"`
	ToolName    string `wit:"tool-name"`
	InputBytes  uint64 `wit:"input-bytes"`
	OutputBytes uint64 `wit:"output-bytes"`
	DurationMS  uint64 `wit:"duration-ms"`
	Status      string `wit:"status"`
}

// ShellEvent is record shell-event.
type ShellEvent struct {
	Turn        uint32 `wit:"turn"`
	Binary      string `wit:"binary"`
	Command     string `wit:"command"`
	ExitCode    int32  `wit:"exit-code"`
	Stdout      string `wit:"stdout"`
	Stderr      string `wit:"stderr"`
	StdoutBytes uint64 `wit:"stdout-bytes"`
	StderrBytes uint64 `wit:"stderr-bytes"`
	DurationMS  uint64 `wit:"duration-ms"`
}

// CompactionEvent is record compaction-event.
type CompactionEvent struct {
	Messages      []Message `wit:"messages"`
	SessionTokens uint64    `wit:"session-tokens"`
	Threshold     float64   `wit:"threshold"`
	Model         *string   `wit:"model"`
	SystemPrompt  *string   `wit:"system-prompt"`
}

// SessionEndEvent is record session-end-event.
type SessionEndEvent struct {
	TotalTurns        uint32 `wit:"total-turns"`
	TotalInputTokens  uint64 `wit:"total-input-tokens"`
	TotalOutputTokens uint64 `wit:"total-output-tokens"`
	TotalToolCalls    uint32 `wit:"total-tool-calls"`
	TotalShellCalls   uint32 `wit:"total-shell-calls"`
	DurationMS        uint64 `wit:"duration-ms"`
	ExitStatus        string `wit:"exit-status"`
}

// Types of murmur:runtime/inference@0.2.0.

// InferenceRequest is record inference-request.
type InferenceRequest struct {
	Messages     []Message `wit:"messages"`
	SystemPrompt *string   `wit:"system-prompt"`
	Model        *string   `wit:"model"`
}

// InferenceResponse is record inference-response.
type InferenceResponse struct {
	Text         string `wit:"text"`
	ModelUsed    string `wit:"model-used"`
	InputTokens  uint64 `wit:"input-tokens"`
	OutputTokens uint64 `wit:"output-tokens"`
}

// Types of murmur:message/send@0.1.0.

// PeerMessage is record message of murmur:message/send.
type PeerMessage struct {
	MessageID string  `wit:"message-id"`
	ContextID *string `wit:"context-id"`
	Text      string  `wit:"text"`
}

// PeerTaskResult is record task-result of murmur:message/send.
type PeerTaskResult struct {
	TaskID    string `wit:"task-id"`
	ContextID string `wit:"context-id"`
	State     string `wit:"state"`
}

// Types of murmur:shell/execute@0.1.0.

// ShellResult is record shell-result.
type ShellResult struct {
	ExitCode       int32   `wit:"exit-code"`
	Stdout         string  `wit:"stdout"`
	Stderr         string  `wit:"stderr"`
	Truncated      bool    `wit:"truncated"`
	FullOutputPath *string `wit:"full-output-path"`
}

// Types of murmur:task-io/read@0.1.0.

// TaskText is record task-text.
type TaskText struct {
	TaskID      string  `wit:"task-id"`
	ContextID   string  `wit:"context-id"`
	Input       string  `wit:"input"`
	AgentResult *string `wit:"agent-result"`
}

// Types of murmur:conversation/read@0.1.0.

// ConversationEntry is record entry.
type ConversationEntry struct {
	Index   uint64  `wit:"index"`
	TaskID  *string `wit:"task-id"`
	Role    string  `wit:"role"`
	Content string  `wit:"content"`
}

// ConversationPage is record page.
type ConversationPage struct {
	Entries []ConversationEntry `wit:"entries"`
	Next    *uint64             `wit:"next"`
}
