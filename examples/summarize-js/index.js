// A tool in JavaScript that asks the capsule's own model: it sends its
// input's text through murmur:runtime/inference run-inference — the
// capsule's driver, gateway, spend ceilings and trace, no model of its own
// — and returns the one-line summary, as examples/summarize-go does.
// Importing run-inference by name is what puts it in the component's
// world (tools/guest/lib/worlds.mjs).
import { runInference } from 'murmur:runtime/inference@0.2.0';

export const run = {
  run(input) {
    let text;
    try {
      text = JSON.parse(input.data ?? '').text;
    } catch {
      text = undefined;
    }
    if (typeof text !== 'string' || text === '') {
      return { status: 'failed', summary: 'summarize-js needs {"text": "..."}', truncated: false, metadata: [] };
    }
    let answer;
    try {
      answer = runInference({
        messages: [{ role: 'user', content: text }],
        systemPrompt: "Summarise the user's text in one line.",
        model: undefined,
      });
    } catch (e) {
      return { status: 'failed', summary: `run-inference: ${e.payload ?? e}`, truncated: false, metadata: [] };
    }
    return { status: 'passed', data: answer.text, truncated: false, metadata: [] };
  },
};
