// A tool in JavaScript that uses the capsule's other powers: it calls
// another tool of its capsule through murmur:tool-registry/invoke, runs a
// command through murmur:shell/execute under the capsule's shell grant,
// and sends a task to a peer capsule through murmur:message/send — each
// part only when its input asks. Importing each interface by name is what
// puts it in the component's world (tools/guest/lib/worlds.mjs). Input is
// JSON:
//
//   {"tool": "echo-go", "input": {"text": "hi"}, "shell": ["echo", "hello"],
//    "peer": "http://127.0.0.1:8080/", "text": "do this"}
//
// The result's data is a JSON object with one key per part that ran; a
// part the host refuses fails the call with the host's refusal.
import { invoke } from 'murmur:tool-registry/invoke@0.1.0';
import { run as execute } from 'murmur:shell/execute@0.1.0';
import { send } from 'murmur:message/send@0.1.0';

function failed(summary) {
  return { status: 'failed', summary, truncated: false, metadata: [] };
}

// A host import's err arrives as a thrown ComponentError whose payload is
// the string the host returned.
function refusal(e) {
  return e && e.payload !== undefined ? String(e.payload) : String(e);
}

export const run = {
  run(input) {
    let req;
    try {
      req = JSON.parse(input.data ?? '');
    } catch {
      req = undefined;
    }
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      return failed('relay-js needs a JSON object with "tool", "shell" or "peer"');
    }
    const out = {};
    if (typeof req.tool === 'string') {
      // The host passes the callee JSON only, as the model would.
      const data = JSON.stringify(req.input ?? {});
      let r;
      try {
        r = invoke(req.tool, { data, logPath: undefined });
      } catch (e) {
        return failed(`invoke ${req.tool}: ${refusal(e)}`);
      }
      out.tool = { status: r.status, data: r.data ?? null, summary: r.summary ?? null };
    }
    if (Array.isArray(req.shell) && req.shell.length > 0) {
      const [binary, ...args] = req.shell.map(String);
      let r;
      try {
        r = execute(binary, args, []);
      } catch (e) {
        return failed(`shell ${binary}: ${refusal(e)}`);
      }
      out.shell = { exit: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    }
    if (typeof req.peer === 'string') {
      let r;
      try {
        r = send(req.peer, { messageId: `relay-js-${Date.now()}`, contextId: undefined, text: String(req.text ?? '') });
      } catch (e) {
        return failed(`send ${req.peer}: ${refusal(e)}`);
      }
      out.peer = { taskId: r.taskId, state: r.state };
    }
    if (Object.keys(out).length === 0) {
      return failed('relay-js needs a JSON object with "tool", "shell" or "peer"');
    }
    return { status: 'passed', data: JSON.stringify(out), truncated: false, metadata: [] };
  },
};
