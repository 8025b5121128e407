//go:build wasip1

// Command hook-compact is murmur/hook-compact, the reference compaction
// hook: at the threshold it sends the conversation to the capsule's own
// model through murmur:runtime/inference run-inference, asking for a
// summary, and answers replace-context with one user message holding that
// summary, so the task goes on from it. inference.compaction.model and
// system_prompt reach it in the event; without a system prompt it uses its
// own. A failed call is its error, which ends the task (a compaction
// hook's failure is fatal).
package main

import (
	"fmt"
	"strings"

	"github.com/murmur/mur/sdk/go/hook"
)

// defaultPrompt is the summarising instruction when the capsule sets no
// inference.compaction.system_prompt.
const defaultPrompt = `You compact an AI agent's conversation so it can continue within its context window.
Write a summary the agent will continue from, in place of the whole conversation. Keep:
- the task exactly as the user gave it, with every requirement;
- what has been done, the results of tool calls that still matter, and the files, names and values involved;
- what is left to do and the next step.
Leave out anything the agent no longer needs. Answer with the summary only.`

// Lead opens the message that replaces the conversation.
const Lead = "[murmur] The conversation so far was compacted. Summary:"

func compact(e hook.CompactionEvent) (hook.Output, error) {
	var transcript strings.Builder
	for _, m := range e.Messages {
		fmt.Fprintf(&transcript, "<%s>\n%s\n</%s>\n", m.Role, m.Content, m.Role)
	}
	prompt := defaultPrompt
	if e.SystemPrompt != nil {
		prompt = *e.SystemPrompt
	}
	r, err := hook.RunInference(hook.InferenceRequest{
		Messages:     []hook.Message{{Role: "user", Content: "The conversation to summarise:\n\n" + transcript.String()}},
		SystemPrompt: &prompt,
		Model:        e.Model,
	})
	if err != nil {
		return hook.None(), fmt.Errorf("hook-compact: the summary call failed: %w", err)
	}
	summary := strings.TrimSpace(r.Text)
	if summary == "" {
		return hook.None(), fmt.Errorf("hook-compact: the model (%s) returned an empty summary", r.ModelUsed)
	}
	return hook.ReplaceContext([]hook.Message{{Role: "user", Content: Lead + "\n\n" + summary + "\n\nContinue the task from here."}}), nil
}

func init() {
	hook.Run(hook.Handlers{OnCompaction: compact})
}

func main() {}
