// Package processdriver writes the driver side of `transport: process`
// (world murmur:driver/process-driver@0.1.0) as ordinary Go: a Driver that
// describes one harness CLI, plans its launch and reads its output lines.
// The runtime owns the process; the driver is granted nothing and only
// translates.
//
//	func init() { processdriver.Run(myHarness{}) }
//
//	func main() {}
package processdriver

// InterruptMode is how the runtime interrupts the harness on CancelTask.
type InterruptMode uint8

// The interrupt-mode cases, in WIT order.
const (
	InterruptStdinMessage InterruptMode = iota
	InterruptSignalInt
	InterruptUnsupported
)

// Description is what describe() returns.
type Description struct {
	Executable     string
	VersionArgs    []string
	TestedVersions []string
	RequiredEnv    []string
	Interrupt      InterruptMode
	ReportsUsage   bool
}

// ToolServer is the runtime's loopback tool server.
type ToolServer struct {
	URL       string
	Token     string
	ToolNames []string
}

// LaunchRequest is one harness run to plan. Nil pointers are absent
// options.
type LaunchRequest struct {
	Prompt        string
	SystemPrompt  *string
	Model         *string
	Config        *string // inference.driver.config as JSON
	ResumeSession *string
	Tools         *ToolServer
	MaxTurns      uint32
}

// LaunchPlan is how to start the harness.
type LaunchPlan struct {
	Args       []string
	EnvSet     [][2]string
	Stdin      []byte
	CloseStdin bool
	Interrupt  []byte
}

// EventKind names the case of an Event, in WIT order.
type EventKind uint8

// The harness-event cases.
const (
	EventSession EventKind = iota
	EventMessage
	EventToolCall
	EventUsage
	EventFinished
	EventFailed
	EventSessionNotFound
)

// ToolCall is a tool call the model made; Input is JSON.
type ToolCall struct {
	ID    string
	Name  string
	Input string
}

// Usage is the token usage of a closed turn.
type Usage struct {
	InputTokens  uint64
	OutputTokens uint64
}

// Event is one harness-event. Text carries the session id, message,
// final result, failure or missing session; ToolCall and Usage their
// cases.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall ToolCall
	Usage    Usage
}

// Driver drives one harness.
type Driver interface {
	Describe() Description
	// ParseVersion reads the version check's output; ok is false when it
	// cannot be read.
	ParseVersion(output string) (version string, ok bool)
	Launch(LaunchRequest) (LaunchPlan, error)
	// ParseLine reads one line of the harness's stdout, without its
	// newline.
	ParseLine(line string) ([]Event, error)
}

var driver Driver

// Run registers d as the component's murmur:driver/process
// implementation. Call it once, from init.
func Run(d Driver) {
	if driver != nil {
		panic("processdriver.Run called twice")
	}
	driver = d
}
