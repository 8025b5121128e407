// A compaction hook in JavaScript, the counterpart of murmur/hook-compact:
// at the threshold it sends the conversation to the capsule's own model
// through murmur:runtime/inference run-inference and answers
// replace-context with one user message holding the summary. Bind it with
// binding: on-compaction, commit_policy: replace-context. A failed call is
// its error, which ends the task (a compaction hook's failure is fatal).
// Every other event answers none.
import { runInference } from 'murmur:runtime/inference@0.2.0';

const none = { tag: 'none' };

const defaultPrompt =
  "You compact an AI agent's conversation so it can continue within its context window. " +
  'Keep the task as the user gave it, what has been done and what is left. Answer with the summary only.';

export const lifecycle = {
  onStage: () => none,
  onSessionStart: () => none,
  onTaskStart: () => none,
  onInference: () => none,
  onToolCall: () => none,
  onShell: () => none,
  onCompaction(event) {
    const transcript = event.messages.map((m) => `<${m.role}>\n${m.content}\n</${m.role}>\n`).join('');
    const answer = runInference({
      messages: [{ role: 'user', content: `The conversation to summarise (hook-compact-js):\n\n${transcript}` }],
      systemPrompt: event.systemPrompt ?? defaultPrompt,
      model: event.model,
    });
    const summary = answer.text.trim();
    if (summary === '') {
      throw `hook-compact-js: the model (${answer.modelUsed}) returned an empty summary`;
    }
    return {
      tag: 'replace-context',
      val: [{ role: 'user', content: `[murmur] The conversation so far was compacted (hook-compact-js). Summary:\n\n${summary}\n\nContinue the task from here.` }],
    };
  },
  onTaskEnd: () => none,
  onSessionEnd: () => none,
};
