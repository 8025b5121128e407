// A script capsule in JavaScript (world murmur:runtime-guest/capsule),
// built with componentize-js: no model, the component drives its
// capsule's tools itself, as examples/script-go does. It asks echo-go to
// echo a greeting, has file-go write what came back to greeting.txt,
// reads the file back through file-go, and prints what it wrote: the
// session's answer. A call that does not pass (a tool the capsule lacks,
// a policy hook's deny) throws, and the task fails with that tool's
// reason.
import { invoke } from 'murmur:tool-registry/invoke@0.1.0';

// call invokes a tool of the capsule with input as its JSON and returns
// its text, or throws naming the tool when the call did not pass.
function call(tool, input) {
  const r = invoke(tool, { data: JSON.stringify(input) });
  if (r.status !== 'passed') {
    throw new Error(`${tool}: ${r.status}: ${r.data ?? r.summary ?? ''}`);
  }
  return r.data ?? r.summary ?? '';
}

export const run = {
  run() {
    const echoed = call('echo-go', { text: 'hello from a JS script capsule' });
    const msg = JSON.parse(echoed);
    call('file-go', { op: 'write', path: 'greeting.txt', content: msg.text });
    const back = call('file-go', { op: 'read', path: 'greeting.txt' });
    console.log(`greeting.txt: ${back}`);
  },
};
