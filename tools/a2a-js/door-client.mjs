// Drives a mur door with the official A2A JS client (@a2a-js/sdk): send,
// stream, get, list with paging, cancel, subscribe, an input-required round
// trip, and the refusals (401, scope, peer). Run by TestJSClient in
// internal/door (make test-door-js), which starts the doors and passes:
//
//   DOOR_URL      a public door whose backend is the door tests' double
//   AUTH_URL      a door with network.authentication
//   AUTH_SENDER   a token holding SendMessage, GetTask, ListTasks
//   AUTH_WATCHER  a token holding GetTask and murmur.WatchSession only
//   PEERLESS_URL  a door that does not accept peer tasks
//
// Exit status 0 when every check passes; each failure prints one line.
import { ClientFactory } from '@a2a-js/sdk/client';
import { TaskState, Role } from '@a2a-js/sdk';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

let failures = 0;
const check = (ok, what, detail) => {
  if (ok) {
    console.log(`ok   ${what}`);
  } else {
    failures++;
    console.log(`FAIL ${what}${detail === undefined ? '' : ': ' + JSON.stringify(detail)}`);
  }
};

let n = 0;
const message = (text, extra = {}) => ({
  messageId: `js-${process.pid}-${++n}`,
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text } }],
  ...extra,
});
const request = (text, configuration, extra) => ({ message: message(text, extra), ...(configuration ? { configuration } : {}) });

// Results and stream items arrive as a Task, or as a oneof wrapper.
const unwrap = (x) => (x && x.payload && x.payload.value) || x;
const stateOf = (x) => unwrap(x)?.status?.state;
const textOfParts = (parts) => (parts || []).map((p) => p.content?.value ?? p.text ?? '').join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitState(client, id, want) {
  for (let i = 0; i < 400; i++) {
    const t = await client.getTask({ id });
    if (t.status?.state === want) return t;
    await sleep(25);
  }
  return client.getTask({ id });
}

const withHeaders = (headers) => ({ serviceParameters: headers });

async function main() {
  const factory = new ClientFactory();
  const client = await factory.createFromUrl(env('DOOR_URL'));

  // SendMessage.
  const done = unwrap(await client.sendMessage(request('echo hello')));
  check(done.status?.state === TaskState.TASK_STATE_COMPLETED, 'SendMessage completes', done.status);
  check(textOfParts(done.artifacts?.[0]?.parts) === 'hello', 'SendMessage answer in an artifact', done.artifacts);

  // GetTask.
  const got = await client.getTask({ id: done.id });
  check(got.id === done.id && got.status?.state === TaskState.TASK_STATE_COMPLETED, 'GetTask', got.status);

  // SendStreamingMessage.
  const states = [];
  for await (const ev of client.sendMessageStream(request('echo streamed'))) {
    const s = stateOf(ev);
    if (s !== undefined) states.push(s);
  }
  check(states[0] === TaskState.TASK_STATE_SUBMITTED && states.at(-1) === TaskState.TASK_STATE_COMPLETED,
    'SendStreamingMessage streams SUBMITTED … COMPLETED', states);

  // ListTasks with paging.
  for (let i = 0; i < 4; i++) await client.sendMessage(request(`echo page ${i}`));
  const seen = new Set();
  let token = '';
  let pages = 0;
  let total = -1;
  do {
    // An absent status is sent as "UNRECOGNIZED" by this SDK version, which
    // the door refuses as an unknown state: name "any state" explicitly.
    const page = await client.listTasks({ pageSize: 2, pageToken: token, status: TaskState.TASK_STATE_UNSPECIFIED });
    pages++;
    total = page.totalSize;
    for (const t of page.tasks) seen.add(t.id);
    token = page.nextPageToken;
  } while (token && pages < 50);
  check(seen.size === total && total >= 6 && pages === Math.ceil(total / 2), 'ListTasks pages through every task',
    { seen: seen.size, total, pages });

  await refused(() => client.listTasks({ pageSize: 2 }), /invalid params|-32602|not a task state/i,
    'ListTasks with an unknown status filter is invalid params');

  // CancelTask.
  const held = unwrap(await client.sendMessage(request('hold', { returnImmediately: true })));
  const canceled = await client.cancelTask({ id: held.id });
  check(canceled.status?.state === TaskState.TASK_STATE_CANCELED, 'CancelTask', canceled.status);

  // SubscribeToTask.
  const slow = unwrap(await client.sendMessage(request('sleep 400', { returnImmediately: true })));
  const subStates = [];
  for await (const ev of client.resubscribeTask({ id: slow.id })) {
    const s = stateOf(ev);
    if (s !== undefined) subStates.push(s);
  }
  check(subStates.at(-1) === TaskState.TASK_STATE_COMPLETED, 'SubscribeToTask follows the task to its end', subStates);

  // Input required, and the follow-up that resumes the same task.
  const asking = unwrap(await client.sendMessage(request('ask which branch?')));
  check(asking.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, 'a task asks for input', asking.status);
  check(textOfParts(asking.status?.message?.parts) === 'which branch?', 'the prompt is the status message', asking.status?.message);
  const resumed = unwrap(await client.sendMessage(request('main', undefined, { taskId: asking.id, contextId: asking.contextId })));
  check(resumed.id === asking.id && resumed.status?.state === TaskState.TASK_STATE_COMPLETED, 'the follow-up resumes the same task', resumed.status);
  check(textOfParts(resumed.artifacts?.[0]?.parts) === 'reply: main', 'the reply reached the task', resumed.artifacts);

  // Refusals.
  const auth = await factory.createFromUrl(env('AUTH_URL'));
  await refused(() => auth.sendMessage(request('echo no token')), /401|nauthenticated|bearer/i, 'no token: 401');
  const bearer = (t) => withHeaders({ Authorization: `Bearer ${t}` });
  const ok = unwrap(await auth.sendMessage(request('echo with token'), bearer(env('AUTH_SENDER'))));
  check(ok.status?.state === TaskState.TASK_STATE_COMPLETED, 'a token with the scope is served', ok.status);
  await refused(() => auth.sendMessage(request('echo watcher'), bearer(env('AUTH_WATCHER'))), /scope|403|denied/i, 'a token without the scope is refused');
  await refused(() => auth.getTask({ id: ok.id }, bearer(env('AUTH_WATCHER'))), /not found|-32001/i, "another credential's task is not visible");

  const peerless = await factory.createFromUrl(env('PEERLESS_URL'));
  await refused(() => peerless.sendMessage(request('echo from a peer'), withHeaders({ 'x-murmur-task-origin': 'peer' })),
    /403|peer/i, 'a peer task is refused');
  const notPeer = unwrap(await peerless.sendMessage(request('echo not a peer')));
  check(notPeer.status?.state === TaskState.TASK_STATE_COMPLETED, 'a caller that is not a peer is served', notPeer.status);
}

async function refused(call, pattern, what) {
  try {
    const res = await call();
    check(false, what, { served: res });
  } catch (e) {
    check(pattern.test(String(e?.message ?? e)), what, String(e?.message ?? e));
  }
}

main().then(
  () => {
    if (failures > 0) {
      console.log(`${failures} check(s) failed`);
      process.exit(1);
    }
  },
  (e) => {
    console.log(`FAIL ${e?.stack ?? e}`);
    process.exit(1);
  },
);
