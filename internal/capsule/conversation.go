package capsule

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/conversation"
	"github.com/murmur/mur/internal/diag"
	"github.com/murmur/mur/internal/event"
	"github.com/murmur/mur/internal/manifest"
	"github.com/murmur/mur/internal/session"
)

// Conversation is what a session does with conversations (spec 004
// context.record, context.retain, lifecycle.conversation): the policy, and
// for a mur run --resume launch the session it continues.
type Conversation struct {
	Policy conversation.Policy
	// Resumed is the recorded session a --resume launch continues.
	Resumed *conversation.ResumePoint
	// Compact is --resume-mode compact: the resumed history goes through
	// the on-compaction hooks before the launch task.
	Compact bool
}

// Resume modes (mur run --resume-mode).
const (
	ResumeFull    = "full"
	ResumeCompact = "compact"
)

// conversationFor resolves the capsule's conversation policy with mur
// run's --context and --resume. A session --resume cannot continue refuses
// the launch with E-RUN-901, naming why.
func conversationFor(c *manifest.Capsule, murmurHome, manifestDir string, o Options) (Conversation, error) {
	pol, err := conversation.PolicyFor(c, murmurHome)
	if err != nil {
		return Conversation{}, err
	}
	pol.LaunchContext = o.ContextID
	refuse := func(pos diag.Pos, field, format string, args ...any) (Conversation, error) {
		return Conversation{}, refusal(diag.List{diag.New(diag.RunResume, pos, field, fmt.Sprintf(format, args...))})
	}
	switch o.ResumeMode {
	case "", ResumeFull, ResumeCompact:
	default:
		return refuse(diag.Pos{}, "--resume-mode", "--resume-mode %q: give %s (the whole record) or %s (through the on-compaction hooks)", o.ResumeMode, ResumeFull, ResumeCompact)
	}
	compact := o.ResumeMode == ResumeCompact
	if o.Resume == "" {
		if compact {
			return refuse(diag.Pos{}, "--resume-mode", "--resume-mode compact compacts a resumed session's record; give --resume SESSION with it")
		}
		return Conversation{Policy: pol}, nil
	}
	if compact && c.Inference.IsProcess() {
		return refuse(c.Pos("inference.transport"), "--resume-mode", "--resume-mode compact: under transport: process the harness holds the conversation and compacts it itself (spec 004); resume with --resume-mode full")
	}
	if o.ContextID != "" {
		return refuse(diag.Pos{}, "--resume", "--resume %s continues that session's context; give --resume or --context %s, not both", o.Resume, o.ContextID)
	}
	if !pol.Record {
		return refuse(c.Pos("context.record"), "context.record", "--resume %s: context.record is off, so this capsule keeps no conversation to continue; remove record: off", o.Resume)
	}
	if _, err := session.ParseID(o.Resume); err != nil {
		return refuse(diag.Pos{}, "--resume", "--resume %q is not a session id (ses_…); mur trace report lists this capsule's sessions", o.Resume)
	}
	group, err := session.RecordsGroup(murmurHome, manifestDir)
	if err != nil {
		return Conversation{}, err
	}
	dir := filepath.Join(group, o.Resume)
	if _, err := os.Stat(filepath.Join(dir, "trace.jsonl")); err != nil {
		return refuse(diag.Pos{}, "--resume", "--resume %s: no such session of this capsule under %s; mur trace report lists them", o.Resume, group)
	}
	rp, err := conversation.ReadResumePoint(dir)
	if errors.Is(err, conversation.ErrNothingToResume) {
		return refuse(diag.Pos{}, "--resume", "--resume %s: %v", o.Resume, err)
	}
	if err != nil {
		return refuse(diag.Pos{}, "--resume", "--resume %s: its trace cannot be read: %v", o.Resume, err)
	}
	// The resumed launch loads the record whatever lifecycle.conversation
	// says (spec 004).
	pol.LaunchContext, pol.Load = rp.ContextID, true
	return Conversation{Policy: pol, Resumed: &rp, Compact: compact}, nil
}

// compactionHooked reports whether any hook may serve on-compaction: one
// bound to it, or one with no binding (every event it exports). Whether
// an unbound hook exports on-compaction is known once it is instantiated;
// Session.Compact checks that.
func compactionHooked(hs []hookEntry) bool {
	for _, h := range hs {
		if h.spec.Binding == component.OnCompaction || h.spec.Binding == "" {
			return true
		}
	}
	return false
}

// openConversation starts the session's conversations after
// session_start: context.retain is applied (each removal a retention
// record), and a resume is recorded with every background command the
// resumed session lost, each also said once on stderr. A launch record
// that cannot be read refuses the session (E-RUN-902).
func (s *Session) openConversation(cv Conversation) *diag.Diagnostic {
	s.conv = conversation.NewKeeper(cv.Policy)
	r, err := s.conv.Launch(s.now())
	if r.Trimmed > 0 {
		s.events.Emit(event.Event{Type: "retention", Fields: map[string]any{
			"record_store": cv.Policy.Store.Dir, "context_id": r.ContextID, "reason": "max_messages", "dropped": r.Trimmed}})
	}
	for _, rm := range r.Removed {
		s.events.Emit(event.Event{Type: "retention", Fields: map[string]any{
			"record_store": cv.Policy.Store.Dir, "context_id": rm.ContextID, "reason": "max_age", "dir": rm.Dir,
			"last_write": rm.LastWrite.UTC()}})
	}
	if err != nil {
		d := diag.New(diag.RunConversationRecord, diag.Pos{}, "context.record", err.Error())
		return &d
	}
	if rp := cv.Resumed; rp != nil {
		s.compactResume = cv.Compact
		lost := make([]map[string]any, len(rp.Lost))
		for i, x := range rp.Lost {
			lost[i] = map[string]any{"work_id": x.WorkID, "binary": x.Binary, "command": x.Command, "detached": x.Detached, "log": x.Log}
			fmt.Fprintf(s.stderr, "mur: %s: lost work %s: %s (%s), moved to the background at %s, has no completion in %s's trace; its result is gone\n",
				s.dirs.ID, x.WorkID, x.Command, x.Binary, x.Detached.UTC().Format("2006-01-02 15:04:05"), rp.SessionID)
		}
		s.events.Emit(event.Event{Type: "resume", Fields: map[string]any{
			"from_session": rp.SessionID, "context_id": rp.ContextID, "lost": lost}})
	}
	return nil
}

// beginTask opens t's context: a task without one gets the launch's
// (--context or --resume) when it is the launch task, else a new one. It
// returns the history the task starts from and the log its messages go
// to (neither under transport: process); a record that cannot be opened
// or read fails the task.
func (s *Session) beginTask(t *Task, launch bool) ([]agent.Message, *conversation.TaskLog, error) {
	if t.ContextID == "" && launch {
		t.ContextID = s.conv.Policy().LaunchContext
	}
	if t.ContextID == "" {
		id, err := conversation.NewContextID()
		if err != nil {
			return nil, nil, err
		}
		t.ContextID = id
	}
	// Under transport: process the harness holds the conversation: no
	// record is written (spec 004), only the harness session map.
	if s.harness != nil {
		return nil, nil, nil
	}
	return s.conv.Begin(t.ContextID, s.dirs.ID, t.ID)
}

// endTask reports a record that missed messages, and under
// lifecycle.conversation: threaded writes out/result_<taskId>.txt.
func (s *Session) endTask(t Task, o Outcome, log *conversation.TaskLog) {
	if log != nil {
		if err := log.Err(); err != nil {
			fmt.Fprintf(s.stderr, "mur: %s: %v\n", s.dirs.ID, err)
			s.events.Emit(event.Event{Type: "conversation_record_failed", Fields: map[string]any{
				"task_id": t.ID, "context_id": t.ContextID, "error": err.Error(), "appended": log.Appended()}})
		}
	}
	if s.conv.Policy().Threaded {
		path := filepath.Join(s.dirs.Out(), "result_"+t.ID+".txt")
		if err := os.WriteFile(path, []byte(resultFile(o)), 0o600); err != nil {
			fmt.Fprintf(s.stderr, "mur: %s: %v\n", s.dirs.ID, err)
		}
	}
}
