package conversation

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/murmur/mur/internal/infer"
)

// Policy is what a session does with conversations: context.record,
// record_store and retain from the manifest, lifecycle.conversation, and
// mur run's --context or --resume.
type Policy struct {
	// Record is context.record: on; off keeps nothing and loads nothing.
	Record bool
	Store  Store
	// Threaded is lifecycle.conversation: threaded: a task starts from
	// its context's record and its result is also written to
	// out/result_<taskId>.txt.
	Threaded bool
	// Load is Threaded, or a --resume launch: a task starts from its
	// context's whole record.
	Load bool
	// MaxMessages and MaxAge are context.retain; zero is unset.
	MaxMessages int
	MaxAge      time.Duration
	// LaunchContext is the context the launch opens: --context, or the
	// resumed session's; "" mints one per task.
	LaunchContext string
}

// Keeper gives each task of a session its context's record: the history
// to start from and the log its messages are appended to.
type Keeper struct {
	p  Policy
	mu sync.Mutex
	// log is the record of the last task's context, kept open for the
	// next task of the same context.
	log *Log
}

// NewKeeper keeps conversations by p.
func NewKeeper(p Policy) *Keeper { return &Keeper{p: p} }

// Policy is the keeper's policy.
func (k *Keeper) Policy() Policy { return k.p }

// Retention is what context.retain did at a launch.
type Retention struct {
	// Trimmed counts the messages max_messages dropped from the launch
	// context's record.
	Trimmed   int
	ContextID string
	Removed   []Removal
}

// Launch applies context.retain as the session starts: the launch
// context's record is opened (adopted when unowned and this capsule
// declares retain) and cut to its newest max_messages, then every other
// record this capsule owns past max_age is removed. A record that cannot
// be read is an error: the launch is about to continue it.
func (k *Keeper) Launch(now time.Time) (Retention, error) {
	r := Retention{ContextID: k.p.LaunchContext}
	if !k.p.Record {
		return r, nil
	}
	if k.p.LaunchContext != "" {
		k.mu.Lock()
		l, err := k.openLocked(k.p.LaunchContext)
		if err == nil && k.p.MaxMessages > 0 {
			r.Trimmed, err = l.Trim(k.p.MaxMessages)
		}
		k.mu.Unlock()
		if err != nil {
			return r, err
		}
	}
	var err error
	r.Removed, err = k.p.Store.Sweep(k.p.MaxAge, k.p.LaunchContext, now)
	return r, err
}

// openLocked returns contextID's open record, opening it in place of the
// one held.
func (k *Keeper) openLocked(contextID string) (*Log, error) {
	if k.log != nil && k.log.ContextID() == contextID {
		return k.log, nil
	}
	l, err := k.p.Store.Open(contextID)
	if err != nil {
		return nil, err
	}
	if k.log != nil {
		k.log.Close()
	}
	k.log = l
	return l, nil
}

// Begin opens a task's context: the messages it starts from (the whole
// record when the policy loads, else none) and the log its new messages go
// to (nil when context.record is off).
func (k *Keeper) Begin(contextID, sessionID, taskID string) ([]infer.Message, *TaskLog, error) {
	if !k.p.Record {
		return nil, nil, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	l, err := k.openLocked(contextID)
	if err != nil {
		return nil, nil, err
	}
	var history []infer.Message
	if k.p.Load {
		rec, err := ReadFile(l.Path())
		if err != nil {
			return nil, nil, err
		}
		history = answered(rec.Messages())
	}
	return history, &TaskLog{log: l, session: sessionID, task: taskID}, nil
}

// answered drops a last assistant message whose tool calls have no
// results: its writer was killed between the model's answer and the
// results' message, and a provider refuses a conversation that leaves a
// tool call unanswered. The model is asked again from the message before.
func answered(msgs []infer.Message) []infer.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == infer.RoleAssistant {
		for _, b := range msgs[n-1].Content {
			if b.Type == infer.BlockToolUse {
				return msgs[:n-1]
			}
		}
	}
	return msgs
}

// Close closes the record held open.
func (k *Keeper) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log == nil {
		return nil
	}
	err := k.log.Close()
	k.log = nil
	return err
}

// TaskLog appends one task's messages to its context's record.
type TaskLog struct {
	log     *Log
	session string
	task    string

	mu       sync.Mutex
	appended int
	err      error
}

// Append writes m to the record. A failure is kept for Err and the task
// goes on: the conversation in memory is whole, only its record is short.
func (t *TaskLog) Append(m infer.Message) {
	_, err := t.log.Append(Entry{SessionID: t.session, TaskID: t.task, Message: m})
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.err == nil {
			t.err = err
		}
		return
	}
	t.appended++
}

// Appended counts the messages written.
func (t *TaskLog) Appended() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.appended
}

// Err is the first append that failed, naming the record.
func (t *TaskLog) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		return nil
	}
	return fmt.Errorf("the conversation record %s is missing messages: %w", t.log.Path(), t.err)
}

// ErrRecordOff means a resume found nothing to continue because the
// capsule keeps no record.
var ErrRecordOff = errors.New("context.record is off: there is no conversation record to continue")
