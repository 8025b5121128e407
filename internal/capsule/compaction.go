package capsule

import (
	"context"
	"errors"
	"fmt"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/diag"
)

// compactor is agent.Compactor over the session's hooks: the loop calls it
// when a task's conversation reaches inference.compaction.threshold.
type compactor struct{ h *sessionHooks }

// Active implements agent.Compactor.
func (c compactor) Active() bool { return c.h != nil && c.h.set.Bound(component.OnCompaction) }

// Compact implements agent.Compactor: on-compaction goes to every hook
// bound to it in declaration order; the first replace-context a hook's
// commit_policy takes is the new conversation. A blocking hook's failure
// is returned: it is fatal to the task (spec 004: a blocking hook's error
// is fatal only for compaction), and the session ends after that task.
func (c compactor) Compact(ctx context.Context, ev agent.CompactionEvent) (agent.CompactionResult, error) {
	msgs := make([]component.Message, len(ev.Messages))
	for i, m := range ev.Messages {
		msgs[i] = component.Message{Role: m.Role, Content: m.Content}
	}
	c.h.flush(ctx)
	r := c.h.set.Dispatch(ctx, component.OnCompaction, component.CompactionEvent{
		Messages: msgs, SessionTokens: uint64(max(ev.SessionTokens, 0)), Threshold: ev.Threshold,
		Model: ev.Model, SystemPrompt: ev.SystemPrompt,
	}, map[string]any{"task_id": ev.TaskID})
	if len(r.Errs) > 0 {
		return agent.CompactionResult{}, errors.Join(r.Errs...)
	}
	for _, cm := range r.Commits {
		if cm.Output.Case != component.OutReplaceContext {
			continue
		}
		out := agent.CompactionResult{Committed: true, Hook: cm.Hook}
		for _, m := range cm.Output.Messages {
			out.Messages = append(out.Messages, agent.TextMessage{Role: m.Role, Content: m.Content})
		}
		return out, nil
	}
	return agent.CompactionResult{}, nil
}

// endIfCompactionFailed ends the session after a task whose compaction
// hook failed (spec 004: a compaction hook error that follows no refused
// call ends the session as failed): later tasks are not started.
func (s *Session) endIfCompactionFailed(o Outcome) {
	if o.Cause == agent.CauseCompaction {
		s.endSession(diag.New(diag.RunTaskFailed, diag.Pos{}, "", fmt.Sprintf("the session ended: task %s's compaction hook failed: %s", o.TaskID, o.Reason)))
	}
}
