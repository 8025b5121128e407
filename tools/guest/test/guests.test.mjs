// Runs every example component built by `make guests` under jco's
// transpiler and node's WASI shim: each imports and exports exactly what
// its examples/<name>/component.golden lists, and answers real calls.
// MUR_GUEST_OUT names the build directory (default build/guests).
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transpile } from '@bytecodealliance/jco';
import { _setEnv } from '@bytecodealliance/preview2-shim/cli';
import { surface, badWasi } from '../lib/inspect.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..');
const out = process.env.MUR_GUEST_OUT ?? path.join(root, 'build', 'guests');
const examples = path.join(root, 'examples');

// host.mjs stands in for the runtime's murmur imports and records calls.
const hostSource = `
export const calls = { emitted: [], prompts: [], replies: [] };
export const task = {
  requestInput(prompt) { calls.prompts.push(prompt); return calls.replies.shift() ?? ''; },
};
export const chunks = {
  emit(text) { calls.emitted.push(text); },
};
`;

async function load(name) {
  const bytes = fs.readFileSync(path.join(out, `${name}.wasm`));
  const dir = fs.mkdtempSync(path.join(here, '.run-'));
  const hostPath = path.join(dir, 'host.mjs');
  fs.writeFileSync(hostPath, hostSource);
  const { files } = await transpile(bytes, {
    name,
    map: {
      'murmur:task/task': `${hostPath}#task`,
      'murmur:text/chunks': `${hostPath}#chunks`,
    },
  });
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  const mod = await import(pathToFileURL(path.join(dir, `${name}.js`)));
  const host = await import(pathToFileURL(hostPath));
  return { mod, host: host.calls, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const names = fs
  .readdirSync(examples)
  .filter((n) => fs.existsSync(path.join(examples, n, 'component.golden')))
  .sort();

for (const name of names) {
  test(`${name}: imports and exports exactly its golden list`, async () => {
    const bytes = fs.readFileSync(path.join(out, `${name}.wasm`));
    const got = await surface(bytes);
    const want = fs
      .readFileSync(path.join(examples, name, 'component.golden'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    assert.deepEqual(got.murmur, want);
    assert.deepEqual(badWasi(got.wasi), []);
  });
}

for (const name of ['echo-go', 'echo-js']) {
  test(`${name}: returns its input; many large calls reuse the arena`, async () => {
    const { mod, cleanup } = await load(name);
    try {
      assert.deepEqual(mod.run.run({ data: 'hello' }), {
        status: 'passed', summary: undefined, data: 'hello', dataPath: undefined, truncated: false, metadata: [],
      });
      const big = 'x'.repeat(4 << 20);
      for (let i = 0; i < 20; i++) {
        assert.equal(mod.run.run({ data: big + i }).data, big + i);
      }
      const r = mod.run.run({});
      assert.equal(r.status, 'failed');
      assert.equal(r.summary, 'echo needs input data');
    } finally {
      cleanup();
    }
  });
}

test('file-go: declares state_effect and resource_id per call', async () => {
  const cwd = process.cwd();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'file-go-'));
  process.chdir(work);
  const { mod, cleanup } = await load('file-go');
  try {
    const call = (o) => mod.run.run({ data: JSON.stringify(o) });
    const w = call({ op: 'write', path: 'notes/a.txt', content: 'hi' });
    assert.equal(w.status, 'passed');
    assert.deepEqual(w.metadata, [['state_effect', 'mutate'], ['resource_id', 'file:notes/a.txt']]);
    const r = call({ op: 'read', path: '../notes/a.txt' });
    assert.equal(r.data, 'hi');
    assert.deepEqual(r.metadata, [['state_effect', 'read'], ['resource_id', 'file:notes/a.txt']]);
    assert.equal(call({ op: 'list', path: 'notes' }).data, 'a.txt');
    assert.equal(call({ op: 'delete', path: 'x' }).status, 'failed');
  } finally {
    cleanup();
    process.chdir(cwd);
    fs.rmSync(work, { recursive: true, force: true });
  }
});

test('ask-go: calls request-input and streams a chunk', async () => {
  const { mod, host, cleanup } = await load('ask-go');
  try {
    host.replies.push('main');
    const r = mod.run.run({ data: 'Which branch?' });
    assert.equal(r.data, 'main');
    assert.deepEqual(host.prompts, ['Which branch?']);
    assert.deepEqual(host.emitted, ['asking: Which branch?\n']);
  } finally {
    cleanup();
  }
});

test('hook-log-go: every handler answers none', async () => {
  const { mod, cleanup } = await load('hook-log-go');
  try {
    const l = mod.lifecycle;
    assert.deepEqual(l.onStage({ shellAllow: ['git', 'ls'] }), { tag: 'none' });
    assert.deepEqual(l.onSessionStart({ capsuleName: 'c', capsuleVersion: '1', sessionId: 's', model: 'm', capabilities: ['a'] }), { tag: 'none' });
    assert.deepEqual(l.onTaskStart({ taskId: 't', contextId: 'c', source: 'a2a', inputBytes: 5n }), { tag: 'none' });
    assert.deepEqual(l.onInference({ turn: 1, inputTokens: 10n, outputTokens: 20n, decision: 'tool', toolName: 'echo', prompt: undefined, output: 'o', tools: undefined }), { tag: 'none' });
    assert.deepEqual(l.onToolCall({ turn: 1, toolName: 'echo', inputBytes: 1n, outputBytes: 2n, durationMs: 3n, status: 'passed' }), { tag: 'none' });
    assert.deepEqual(l.onShell({ turn: 2, binary: '/usr/bin/ls', command: '-l', exitCode: -1, stdout: 'a', stderr: 'b', stdoutBytes: 1n, stderrBytes: 1n, durationMs: 4n }), { tag: 'none' });
    assert.deepEqual(l.onCompaction({ messages: [{ role: 'user', content: 'x' }], sessionTokens: 100n, threshold: 0.8, model: undefined, systemPrompt: 'p' }), { tag: 'none' });
    assert.deepEqual(l.onTaskEnd({ taskId: 't', exitStatus: 'completed' }), { tag: 'none' });
    assert.deepEqual(l.onSessionEnd({ totalTurns: 2, totalInputTokens: 1n, totalOutputTokens: 2n, totalToolCalls: 1, totalShellCalls: 1, durationMs: 9n, exitStatus: 'ok' }), { tag: 'none' });
  } finally {
    cleanup();
  }
});

// fakeProvider runs the skeleton's provider in a child process: the
// transpiled guest blocks this thread on each wasi:http call, so the
// server cannot share it. It prints its port, then serves one streamed
// answer per request and records what it was sent.
const providerSource = String.raw`
const http = require('node:http');
const seen = [];
const srv = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, body, model: req.headers['x-model'], accept: req.headers.accept });
    if (req.url === '/seen') { res.end(JSON.stringify(seen.slice(0, -1))); return; }
    if (req.url !== '/v1/complete') { res.statusCode = 404; res.end('no such route'); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': warm-up\n\n');
    for (const t of ['Hel', 'lo', ', world']) res.write('event: delta\ndata: ' + JSON.stringify({ text: t }) + '\n\n');
    res.end('event: done\ndata: {"id":"resp-7"}\n\n');
  });
});
srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
`;

test('driver-skeleton-go: streams a provider answer over wasi:http', async () => {
  const child = spawn(process.execPath, ['-e', providerSource], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [chunk] = await once(child.stdout, 'data');
    const endpoint = `http://127.0.0.1:${String(chunk).trim()}/`;
    // The shim snapshots the environment when first loaded; a guest reads
    // it when instantiated.
    _setEnv({ MURMUR_INFERENCE_ENDPOINT: endpoint, MURMUR_INFERENCE_MODEL: 'skeleton-1' });
    const { mod, host, cleanup } = await load('driver-skeleton-go');
    try {
      const r = mod.run.run({ data: '{"messages":[{"role":"user","content":"hi"}]}' });
      assert.equal(r.status, 'passed', r.summary);
      assert.deepEqual(JSON.parse(r.data), { text: 'Hello, world', id: 'resp-7' });
      assert.deepEqual(host.emitted, ['Hel', 'lo', ', world']);
      const seen = await (await fetch(endpoint + 'seen')).json();
      assert.deepEqual(seen, [{
        method: 'POST', url: '/v1/complete', body: '{"messages":[{"role":"user","content":"hi"}]}',
        model: 'skeleton-1', accept: 'text/event-stream',
      }]);
    } finally {
      cleanup();
      _setEnv({});
    }
  } finally {
    child.kill();
  }
});

test('process-driver-skeleton-go: describes, plans and parses a harness', async () => {
  const { mod, cleanup } = await load('process-driver-skeleton-go');
  try {
    const p = mod.process;
    assert.deepEqual(p.describe(), {
      executable: 'harness', versionArgs: ['--version'], testedVersions: ['1.2.3'],
      requiredEnv: ['HOME'], interrupt: 'signal-int', reportsUsage: true,
    });
    assert.equal(p.parseVersion('harness 1.2.3 (build 9)\n'), '1.2.3');
    assert.equal(p.parseVersion('no version here'), undefined);
    const plan = p.launch({
      prompt: 'fix it', systemPrompt: undefined, model: 'm-2', config: '{"effort":"high"}', resumeSession: 'sess-1',
      tools: { url: 'http://127.0.0.1:4100/mcp', token: 'tok', toolNames: ['echo', 'file'] }, maxTurns: 7,
    });
    assert.deepEqual(plan.args, ['--output', 'jsonl', '--max-turns', '7', '--model', 'm-2', '--resume', 'sess-1',
      '--effort', 'high', '--mcp', 'http://127.0.0.1:4100/mcp', '--tools', 'echo,file']);
    assert.deepEqual(plan.envSet, [['NO_COLOR', '1'], ['HARNESS_MCP_TOKEN', 'tok']]);
    assert.equal(new TextDecoder().decode(plan.stdin), 'fix it');
    assert.equal(plan.closeStdin, true);
    assert.throws(() => p.launch({ prompt: 'x', config: 'not json', maxTurns: 1 }), /inference.driver.config/);
    const lines = [
      ['{"type":"session","id":"s-9"}', [{ tag: 'session', val: 's-9' }]],
      ['{"type":"text","text":"on it"}', [{ tag: 'message', val: 'on it' }]],
      ['{"type":"tool_use","id":"c1","name":"echo","input":{"text":"x"}}', [{ tag: 'tool-call', val: { id: 'c1', name: 'echo', input: '{"text":"x"}' } }]],
      ['{"type":"usage","input_tokens":12,"output_tokens":3}', [{ tag: 'usage', val: { inputTokens: 12n, outputTokens: 3n } }]],
      ['{"type":"result","text":"done"}', [{ tag: 'finished', val: 'done' }]],
      ['{"type":"error","code":"session_not_found","message":"s-0"}', [{ tag: 'session-not-found', val: 's-0' }]],
      ['{"type":"error","message":"overloaded"}', [{ tag: 'failed', val: 'overloaded' }]],
      ['{"type":"progress"}', []],
      ['', []],
    ];
    for (const [line, want] of lines) assert.deepEqual(p.parseLine(line), want, line);
    assert.throws(() => p.parseLine('garbage'), /not JSON/);
  } finally {
    cleanup();
  }
});

test('misbehave-go: a panic traps the call', async () => {
  const { mod, cleanup } = await load('misbehave-go');
  try {
    assert.equal(mod.run.run({ data: 'ok' }).data, 'behaved');
    assert.throws(() => mod.run.run({ data: 'panic' }));
  } finally {
    cleanup();
  }
});
