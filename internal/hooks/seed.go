package hooks

import "math"

// What became of an on-task-start hook's seed: the context_seed record's
// status (docs/hooks.md "Seeding a task's context").
const (
	SeedAccepted   = "accepted"
	SeedTruncated  = "truncated"
	SeedSummarized = "summarized"
	SeedRejected   = "rejected"
)

// Why a seed was rejected: the context_seed record's reason. no_budget and
// unsupported_transport are spec 004's; the others name the cases it
// leaves to the runtime.
const (
	// SeedNoBudget: the primary choice has no context window, so there is
	// no ceiling to seed under.
	SeedNoBudget = "no_budget"
	// SeedUnsupportedTransport: under transport: process the harness holds
	// the conversation.
	SeedUnsupportedTransport = "unsupported_transport"
	// SeedOverBudget: past the budget and its overflow margin, and no
	// compaction hook brought it within the budget.
	SeedOverBudget = "over_budget"
	// SeedInvalidMessage: a message whose role is neither user nor
	// assistant.
	SeedInvalidMessage = "invalid_message"
)

// SeedLimits are a session's seed ceilings, resolved once at launch.
type SeedLimits struct {
	// Budget is context.seed_budget × the primary choice's input budget,
	// rounded down (task-start-event.budget-tokens); 0 is no window.
	Budget int64
	// Margin is context.seed_overflow_margin: the slack above Budget, as
	// a fraction of it, within which the oldest messages are dropped.
	Margin float64
}

// NewSeedLimits resolves the ceilings from the primary choice's input
// budget (0 when it has no window) and the effective context block.
func NewSeedLimits(inputBudget int64, seedBudget, margin float64) SeedLimits {
	if inputBudget <= 0 {
		return SeedLimits{}
	}
	return SeedLimits{Budget: int64(math.Floor(seedBudget * float64(inputBudget))), Margin: margin}
}

// Slack is the largest seed whose oldest messages are dropped to fit:
// Budget plus Margin of it, rounded down.
func (l SeedLimits) Slack() int64 {
	return int64(math.Floor(float64(l.Budget) * (1 + l.Margin)))
}

// Fit decides what a seed of messages of the given token sizes, oldest
// first, becomes: accepted whole within the budget; within the slack, its
// oldest messages dropped until the rest fits (drop is how many) —
// truncated; past the slack, or when dropping would leave nothing, over
// (the caller hands it to the compaction hooks, and rejects it when they
// cannot bring it within the budget).
func (l SeedLimits) Fit(sizes []int64) (drop int, status string) {
	var total int64
	for _, n := range sizes {
		total += n
	}
	if total <= l.Budget {
		return 0, SeedAccepted
	}
	if total > l.Slack() {
		return 0, SeedOverBudget
	}
	for drop < len(sizes) && total > l.Budget {
		total -= sizes[drop]
		drop++
	}
	if drop == len(sizes) {
		return 0, SeedOverBudget
	}
	return drop, SeedTruncated
}
