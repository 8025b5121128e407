package door

import (
	"context"
	"errors"

	"github.com/murmur/mur/internal/images"
)

// Origin is what a caller claims in the x-murmur-task-origin header.
type Origin string

// The origins the door tells apart (spec 004 exports.peer_tasks).
const (
	// OriginClient: no origin header, or one the door does not know.
	OriginClient Origin = ""
	// OriginPeer: a task another capsule sent through murmur:message/send.
	OriginPeer Origin = "peer"
	// OriginCompletion: a background command's completion posted back to
	// this session.
	OriginCompletion Origin = "completion"
)

// OriginHeader carries a task's origin.
const OriginHeader = "x-murmur-task-origin"

// Task is one task the door hands the backend to run.
type Task struct {
	ID        string
	ContextID string
	// Text is the text of the message that started the task, its text
	// parts joined by newlines.
	Text string
	// Images are the images the message carried, within context.images
	// (the door refused the message otherwise).
	Images []images.Image
	Origin Origin
	// Caller is the credential whose token started the task: "operator",
	// a declared credential's name, or "" on a door without
	// network.authentication.
	Caller string
	// Traceparent and Tracestate are the W3C trace context headers of the
	// request that started the task ("" for none): a capsule sending
	// through murmur:message/send stamps them, so the task's spans can
	// join the sender's trace.
	Traceparent, Tracestate string
}

// State is how a task ended.
type State string

// The end states a backend reports.
const (
	Completed State = "completed"
	Failed    State = "failed"
	Canceled  State = "canceled"
)

// Outcome is the end of one task.
type Outcome struct {
	State State
	// Text is the answer (Completed) or what went wrong (Failed).
	Text string
	// RunningCommands are the work ids of the session's background
	// commands still running when the task ended; the task's A2A result
	// names them as metadata.murmur.runningCommands (spec 004).
	RunningCommands []string
}

// Updates is what a running task may tell its callers while it runs.
type Updates interface {
	// Progress publishes a working status with text.
	Progress(text string)
	// RequestInput puts the task in TASK_STATE_INPUT_REQUIRED with prompt
	// and blocks until a follow-up SendMessage on the same task brings the
	// reply, the task is cancelled (ctx's error), or
	// lifecycle.input_timeout_secs passes (ErrInputTimeout).
	RequestInput(ctx context.Context, prompt string) (string, error)
}

// ErrInputTimeout: no reply came within lifecycle.input_timeout_secs. The
// task then ends TASK_STATE_FAILED with the status message "input-timeout".
var ErrInputTimeout = errors.New("input-timeout")

// RecordKind names a line the door asks the session to record for a task it
// settled without running it.
type RecordKind string

// The records the door asks for.
const (
	// RecordTaskReceived: the door let a task in (a2a_task_received).
	RecordTaskReceived RecordKind = "a2a_task_received"
	// RecordTaskRejected: an accepted task was never started because the
	// session stopped taking work (task_rejected).
	RecordTaskRejected RecordKind = "task_rejected"
	// RecordTaskCanceled: a task was cancelled while still queued
	// (task_canceled).
	RecordTaskCanceled RecordKind = "task_canceled"
)

// Backend runs the tasks the door admits. internal/capsule implements it
// over the session; tests implement it with doubles. The door never imports
// the session.
type Backend interface {
	// RunTask runs one task to its end. ctx is cancelled when the task is
	// cancelled (CancelTask, StopSession, SIGTERM); the backend then
	// returns an Outcome in state Canceled.
	RunTask(ctx context.Context, task Task, updates Updates) Outcome
	// Record writes one line of the session's record about task.
	Record(kind RecordKind, task Task)
}
