package capsule

import (
	"context"
	"fmt"

	"github.com/murmur/mur/internal/agent"
	"github.com/murmur/mur/internal/component"
	"github.com/murmur/mur/internal/hooks"
)

// The environment a hook reads the seed ceilings from: spec 004's
// task-start-event.budget-tokens and context-window, which the 0.5.0 record
// lacks. Both are fixed at launch, so they are set once per instance; both
// are absent when the primary choice has no window or under transport:
// process.
const (
	EnvSeedBudget    = "MURMUR_SEED_BUDGET_TOKENS"
	EnvContextWindow = "MURMUR_CONTEXT_WINDOW"
)

// seedLimits resolves the session's seed ceilings from the plan: the
// primary choice's input budget at launch times context.seed_budget, with
// context.seed_overflow_margin as the slack.
func (h *sessionHooks) seedLimits(plan *agent.Plan) {
	if plan.Inference.IsProcess() {
		h.process = true
		return
	}
	if len(plan.Limits) == 0 {
		return
	}
	cx := h.c.Context
	if cx == nil || cx.SeedBudget == nil || cx.SeedOverflowMargin == nil {
		// The launch's manifest is the effective one, whose context block
		// has both defaults; a session opened without one seeds nothing.
		return
	}
	p := plan.Limits[0]
	h.seed, h.window = hooks.NewSeedLimits(p.Budget, *cx.SeedBudget, *cx.SeedOverflowMargin), p.Window
}

// seedTask dispatches on-task-start and fits the seed a hook's
// seed-context committed into the task's budget (spec 004
// context.seed_budget, context.seed_overflow_margin): accepted whole within
// the budget; within the overflow margin, its oldest messages dropped;
// past it, handed to the on-compaction hooks (seed summarization), whose
// replacement must then fit; otherwise rejected. Every seed gets one
// context_seed record. What it returns goes after the context's history
// and before the task's text.
func (s *Session) seedTask(ctx context.Context, t Task) []agent.Message {
	h := s.hooks
	hook, seed, ok := h.taskStart(ctx, t)
	if !ok {
		return nil
	}
	rec := map[string]any{"task_id": t.ID, "hook": hook, "messages": len(seed)}
	reject := func(reason string) []agent.Message {
		rec["status"], rec["reason"] = hooks.SeedRejected, reason
		h.set.Record("context_seed", rec)
		h.set.Logf(hook, "on-task-start: seed-context rejected: %s", reason)
		return nil
	}
	msgs := make([]agent.Message, 0, len(seed))
	for _, m := range seed {
		if m.Role != agent.RoleUser && m.Role != agent.RoleAssistant {
			rec["error"] = fmt.Sprintf("seed message %d has role %q; each must be user or assistant", len(msgs), m.Role)
			return reject(hooks.SeedInvalidMessage)
		}
		msgs = append(msgs, agent.Message{Role: m.Role, Content: []agent.Block{{Type: agent.BlockText, Text: m.Content}}})
	}
	sizes, total := measure(msgs)
	rec["tokens"] = total
	switch {
	case h.process:
		return reject(hooks.SeedUnsupportedTransport)
	case h.seed.Budget <= 0:
		return reject(hooks.SeedNoBudget)
	}
	rec["budget_tokens"], rec["context_window"], rec["overflow_limit"] = h.seed.Budget, h.window, h.seed.Slack()
	drop, status := h.seed.Fit(sizes)
	if status == hooks.SeedOverBudget {
		if h.set.Bound(component.OnCompaction) {
			sum, committed, err := s.loop.SummarizeSeed(ctx, compactor{h}, t.ID, t.ContextID, msgs)
			switch {
			case err != nil:
				rec["error"] = err.Error()
			case committed:
				msgs, status = sum, hooks.SeedSummarized
				sizes, rec["summary_tokens"] = measure(msgs)
				// A summary that lands in the margin is cut as a seed
				// would be; one past it is not asked for again.
				if d, st := h.seed.Fit(sizes); st == hooks.SeedOverBudget {
					status = hooks.SeedOverBudget
				} else {
					drop = d
				}
			}
		}
		if status == hooks.SeedOverBudget {
			return reject(hooks.SeedOverBudget)
		}
	}
	if drop > 0 {
		rec["dropped"] = drop
		if status == hooks.SeedAccepted {
			status = hooks.SeedTruncated
		}
		msgs = msgs[drop:]
	}
	_, kept := measure(msgs)
	rec["status"], rec["seeded"], rec["seeded_tokens"] = status, len(msgs), kept
	h.set.Record("context_seed", rec)
	return msgs
}

// measure is each message's token count, as the loop counts the
// conversation, and their sum.
func measure(msgs []agent.Message) ([]int64, int64) {
	sizes := make([]int64, len(msgs))
	var total int64
	for i, m := range msgs {
		sizes[i] = agent.MessageTokens(m)
		total += sizes[i]
	}
	return sizes, total
}
