//go:build wasip1

// Command hook-eval is murmur/hook-eval (spec 004 observability.eval): it
// watches a session's tool calls, tasks and end, scores the session with
// the capsule's scorers and appends the scores to eval.jsonl in its
// current directory — the session's hooks/ under filesystem.records: true.
// It commits nothing. internal/eval holds the scorers and the record.
package main

import (
	"fmt"
	"os"

	"github.com/murmur/mur/internal/eval"
	"github.com/murmur/mur/sdk/go/hook"
)

var (
	seen    eval.Observed
	scorers []eval.Scorer
	dataset string
)

func init() {
	cfg, s, notes := eval.Parse([]byte(os.Getenv(eval.EnvConfig)))
	scorers, dataset = s, cfg.DatasetID
	if d := os.Getenv(eval.EnvDataset); d != "" {
		dataset = d
	}
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "hook-eval: %s\n", n)
	}
	hook.Run(hook.Handlers{
		OnSessionStart: func(c hook.SessionContext) (hook.Output, error) {
			seen.SessionID, seen.Capsule = c.SessionID, c.CapsuleName
			return hook.None(), nil
		},
		OnToolCall: func(e hook.ToolEvent) (hook.Output, error) {
			seen.Tools = append(seen.Tools, e.ToolName)
			return hook.None(), nil
		},
		OnSessionEnd: func(e hook.SessionEndEvent) (hook.Output, error) {
			if len(scorers) == 0 {
				return hook.None(), nil
			}
			seen.ExitStatus, seen.Turns = e.ExitStatus, int64(e.TotalTurns)
			seen.InputTokens, seen.OutputTokens = int64(e.TotalInputTokens), int64(e.TotalOutputTokens)
			if err := eval.Append(eval.File, eval.Score(seen, scorers, dataset)); err != nil {
				return hook.None(), fmt.Errorf("hook-eval: write %s: %w", eval.File, err)
			}
			return hook.None(), nil
		},
	})
}

func main() {}
