// A hook in JavaScript, built with componentize-js against the hook world
// (murmur:runtime/hook with murmur:task-io/read and murmur:conversation/read,
// tools/guest/lib/worlds.mjs). Its capsule entry picks what it does by
// binding and commit_policy in its own murmur.yaml:
//
//   on-tool-call, deny       a call to file-go is denied (err is the deny)
//   on-task-end, reopen-task the task is reopened with feedback quoting the
//                            task's input and the agent's result, read
//                            through murmur:task-io/read
//
// Every other event answers none.
import { current } from 'murmur:task-io/read@0.1.0';

const none = { tag: 'none' };

export const lifecycle = {
  onStage: () => none,
  onSessionStart: () => none,
  onTaskStart: () => none,
  onInference: () => none,
  onToolCall(event) {
    if (event.toolName === 'file-go') {
      throw 'file-go is not allowed by hook-gate-js';
    }
    return none;
  },
  onShell: () => none,
  onCompaction: () => none,
  onTaskEnd() {
    const task = current();
    return { tag: 'reopen-task', val: `hook-gate-js read "${task.input}" and the answer "${task.agentResult ?? ''}"` };
  },
  onSessionEnd: () => none,
};
