#!/usr/bin/env node
// capture.mjs re-captures the replies in client/testdata/sse: it starts server-everything
// and sdk-tasks-server (twice: SSE replies, then --json-response) on 127.0.0.1, talks to
// them over raw loopback sockets as a keep-alive HTTP/1.1 client would, and writes each
// reply's body exactly as it arrived (chunked transfer coding removed, nothing else
// touched) to one file, and README.md with a line per file: the request, the status, the
// headers and the sizes of the chunks the body came in.
//
// Usage (after npm ci here): node capture.mjs [OUTDIR]   (default ../../../client/testdata/sse)
// Ids, timestamps and session ids differ from one capture to the next.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(process.argv[2] ?? path.join(here, '../../../client/testdata/sse'));
const version = (pkg) => JSON.parse(readFileSync(path.join(here, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const SDK = `@modelcontextprotocol/sdk ${version('@modelcontextprotocol/sdk')}`;
const EVERYTHING = `@modelcontextprotocol/server-everything ${version('@modelcontextprotocol/server-everything')} (${SDK})`;
const OURS = `sdk-tasks-server.mjs (${SDK})`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// startPeer runs a node program under the loopback preload and resolves with its port.
function startPeer(args) {
  const child = spawn(process.execPath, ['--import', './loopback.mjs', ...args], {
    cwd: here, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not listen: ${err}`)), 30000);
    child.stderr.on('data', (b) => {
      err += b;
      const m = /tasksim-peers: listening on 127\.0\.0\.1:(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), child });
      }
    });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${err}`)));
  });
}

// request sends one HTTP/1.1 request on a fresh loopback connection and reads the response
// as it comes: chunked or sized bodies end the read, as does cut(). onBody sees the body
// so far after each chunk (to answer a server request met on a stream).
function request(port, { method = 'POST', headers = {}, body, onBody }) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const lines = [`${method} /mcp HTTP/1.1`, `Host: 127.0.0.1:${port}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(payload)}`);
  const sock = net.connect(port, '127.0.0.1');
  let raw = Buffer.alloc(0);
  let head = null;
  let pos = 0; // parse position in raw, past the head
  const chunks = [];
  let bodyParts = [];
  let done = false;
  let resolve;
  const finished = new Promise((r) => { resolve = r; });
  const finish = (how) => {
    if (done) return;
    done = true;
    sock.destroy();
    resolve({ ...head, body: Buffer.concat(bodyParts), chunks, ended: how });
  };
  const parse = () => {
    if (!head) {
      const i = raw.indexOf('\r\n\r\n');
      if (i < 0) return;
      const text = raw.subarray(0, i).toString('latin1');
      const [status, ...hl] = text.split('\r\n');
      const hdrs = hl.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
      const get = (n) => hdrs.find(([k]) => k.toLowerCase() === n)?.[1];
      head = { status, headers: hdrs, chunked: /chunked/i.test(get('transfer-encoding') ?? ''), length: get('content-length') };
      pos = i + 4;
    }
    if (head.chunked) {
      for (;;) {
        const eol = raw.indexOf('\r\n', pos);
        if (eol < 0) return;
        const size = parseInt(raw.subarray(pos, eol).toString('latin1'), 16);
        if (raw.length < eol + 2 + size + 2) return;
        pos = eol + 2 + size + 2;
        if (size === 0) return finish('chunked body ended');
        chunks.push(size);
        bodyParts.push(raw.subarray(eol + 2, eol + 2 + size));
        onBody?.(Buffer.concat(bodyParts).toString('utf8'));
      }
    }
    if (head.length !== undefined) {
      if (raw.length - pos >= Number(head.length)) {
        bodyParts = [raw.subarray(pos, pos + Number(head.length))];
        return finish('content-length reached');
      }
      return;
    }
    if (/^HTTP\/1\.1 (204|304)/.test(head.status)) finish('no body');
  };
  sock.on('data', (b) => { raw = Buffer.concat([raw, b]); parse(); });
  sock.on('end', () => finish('connection closed by the server'));
  sock.on('error', (e) => finish(`socket error ${e.code}`));
  sock.write(lines.join('\r\n') + '\r\n\r\n' + payload);
  return { finished, cut: () => finish('cut by the client') };
}

// A session against one peer, recording every reply it is told to keep.
class Session {
  constructor(port, prefix, pkg, ext) {
    Object.assign(this, { port, prefix, pkg, ext, sid: undefined, id: 0, rows: [], bodiless: [] });
  }
  headers(extra = {}) {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (this.sid) Object.assign(h, { 'Mcp-Session-Id': this.sid, 'MCP-Protocol-Version': '2025-11-25' });
    return { ...h, ...extra };
  }
  // rpc sends a request (or, without id, a notification or response) and returns the reply.
  async rpc(message, { save, what, onBody, headers } = {}) {
    const r = await request(this.port, { headers: this.headers(headers), body: message, onBody }).finished;
    this.keep(r, save, what ?? JSON.stringify(message));
    return r;
  }
  keep(r, save, what) {
    const hdrs = r.headers.filter(([k]) => k.toLowerCase() !== 'date').map(([k, v]) => `${k}: ${v}`).join('; ');
    const row = { what, status: r.status, hdrs, chunks: r.chunks, ended: r.ended, pkg: this.pkg };
    if (!save) {
      if (r.body.length === 0) this.bodiless.push(row);
      return;
    }
    const file = `${this.prefix}-${save}.${this.ext(r)}`;
    writeFileSync(path.join(outDir, file), r.body);
    this.rows.push({ file, ...row });
  }
  async initialize({ caps = { elicitation: { form: {} } }, save = 'initialize' } = {}) {
    const r = await this.rpc({ jsonrpc: '2.0', id: ++this.id, method: 'initialize', params: {
      protocolVersion: '2025-11-25', capabilities: caps, clientInfo: { name: 'tasksim-capture', version: '1' } } },
    { save });
    this.sid = r.headers.find(([k]) => k.toLowerCase() === 'mcp-session-id')?.[1];
    await this.rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, { what: 'notifications/initialized' });
  }
  call(method, params, opts) {
    return this.rpc({ jsonrpc: '2.0', id: ++this.id, method, params }, opts);
  }
  // result returns the JSON-RPC reply to the last request in a reply body (SSE or JSON).
  static reply(r) {
    const text = r.body.toString('utf8');
    const datas = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
    return JSON.parse(datas.length ? datas[datas.length - 1] : text);
  }
  async waitTerminal(taskId) {
    for (let i = 0; i < 300; i++) {
      const t = Session.reply(await this.call('tasks/get', { taskId }, { what: 'tasks/get (poll)' })).result;
      if (['completed', 'failed', 'cancelled'].includes(t?.status)) return t;
      await sleep(t?.pollInterval ?? 200);
    }
    throw new Error(`task ${taskId} did not end`);
  }
  // getStream opens the session's GET stream; stop() ends the capture and saves it.
  getStream(save) {
    const req = request(this.port, { method: 'GET', headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': this.sid, 'MCP-Protocol-Version': '2025-11-25' } });
    return { stop: async () => {
      setTimeout(req.cut, 2000); // the server ends it on DELETE; this bounds the wait
      this.keep(await req.finished, save, 'GET (the session stream) from before the first task to the DELETE');
    } };
  }
  async delete() {
    const r = await request(this.port, { method: 'DELETE', headers: { 'Mcp-Session-Id': this.sid, 'MCP-Protocol-Version': '2025-11-25' } }).finished;
    this.keep(r, undefined, 'DELETE');
  }
}

// answerElicitation POSTs the answer to the first elicitation/create met in a stream body.
function answerer(s, content) {
  let answered = false;
  return (text) => {
    if (answered) return;
    const line = text.split('\n').find((l) => l.startsWith('data:') && l.includes('"elicitation/create"'));
    if (!line) return;
    answered = true;
    const req = JSON.parse(line.slice(5));
    s.rpc({ jsonrpc: '2.0', id: req.id, result: { action: 'accept', content,
      _meta: req.params._meta } }, { what: 'the answer (a JSON-RPC response) to elicitation/create' });
  };
}

async function captureCommon(s, { tool, args, inputArgs, longArgs, answer }) {
  await s.call('tools/list', {}, { save: 'tools-list' });
  const get = s.getStream('get-stream');
  const created = Session.reply(await s.call('tools/call', { name: tool, arguments: args, task: {} }, { save: 'tools-call-task' })).result.task;
  await s.call('tasks/get', { taskId: created.taskId }, { save: 'tasks-get-working' });
  await s.call('tasks/list', {}, { save: 'tasks-list' });
  await s.waitTerminal(created.taskId);
  await s.call('tasks/get', { taskId: created.taskId }, { save: 'tasks-get-completed' });
  await s.call('tasks/result', { taskId: created.taskId }, { save: 'tasks-result' });

  // input_required: tasks/result at once; its stream carries elicitation/create, answered
  // by a separate POST, then the result.
  const asking = Session.reply(await s.call('tools/call', { name: tool, arguments: inputArgs, task: {} })).result.task;
  await s.call('tasks/result', { taskId: asking.taskId }, { save: 'tasks-result-elicitation', onBody: answerer(s, answer) });

  const long = Session.reply(await s.call('tools/call', { name: tool, arguments: longArgs, task: {} })).result.task;
  await s.call('tasks/cancel', { taskId: long.taskId }, { save: 'tasks-cancel' });
  await s.call('tasks/result', { taskId: long.taskId }, { save: 'tasks-result-cancelled' });
  await s.call('tasks/cancel', { taskId: long.taskId }, { save: 'tasks-cancel-terminal' });
  await s.call('tasks/get', { taskId: '0123456789abcdef0123456789abcdef' }, { save: 'tasks-get-unknown' });
  await s.rpc({ jsonrpc: '2.0', id: 999, method: 'tasks/get', params: { taskId: created.taskId } },
    { save: 'unknown-session', headers: { 'Mcp-Session-Id': 'no-such-session' } });
  await s.delete();
  await get.stop();
}

const ext = (r) => (r.headers.some(([k, v]) => k.toLowerCase() === 'content-type' && v.includes('text/event-stream')) ? 'sse' : 'json');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const sessions = [];

{
  const { port, child } = await startPeer(['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'streamableHttp']);
  try {
    const s = new Session(port, 'everything', EVERYTHING, ext);
    sessions.push(s);
    await s.initialize();
    await s.call('tools/call', { name: 'simulate-research-query', arguments: {}, task: {} }, { save: 'tools-call-task-no-args' });
    await captureCommon(s, {
      tool: 'simulate-research-query', args: { topic: 'tasksim' },
      inputArgs: { topic: 'python', ambiguous: true }, answer: { interpretation: 'programming' },
      longArgs: { topic: 'cancelled' },
    });
  } finally {
    child.kill();
  }
}
{
  const { port, child } = await startPeer(['sdk-tasks-server.mjs', '--poll-interval', '200']);
  try {
    const s = new Session(port, 'sdk-tasks', OURS, ext);
    sessions.push(s);
    await s.initialize();
    await captureCommon(s, {
      tool: 'work_task', args: { duration_ms: 300 },
      inputArgs: { duration_ms: 600, input_required: true }, answer: { answer: 'tasksim' },
      longArgs: { duration_ms: 60000 },
    });
    const s2 = new Session(port, 'sdk-tasks', OURS, ext);
    sessions.push(s2);
    await s2.initialize({ save: null });
    const big = Session.reply(await s2.call('tools/call', { name: 'work_task', arguments: { duration_ms: 0, payload_bytes: 204800 }, task: {} })).result.task;
    await s2.waitTerminal(big.taskId);
    await s2.call('tasks/result', { taskId: big.taskId }, { save: 'tasks-result-200k' });
    // A tasks/result that blocks past the SDK's 15 s SSE keep-alive: a comment line.
    const slow = Session.reply(await s2.call('tools/call', { name: 'work_task', arguments: { duration_ms: 15500 }, task: {} })).result.task;
    await s2.call('tasks/result', { taskId: slow.taskId }, { save: 'tasks-result-keepalive' });
    await s2.call('tools/call', { name: 'work_task', arguments: { duration_ms: 0 } }, { save: 'tools-call-required-no-task' });
    await s2.call('tools/call', { name: 'work_sync', arguments: { duration_ms: 0 }, task: {} }, { save: 'tools-call-forbidden-task' });
    await s2.call('tools/call', { name: 'work_task', arguments: { duration_ms: 'soon' }, task: {} }, { save: 'tools-call-task-bad-args' });
    await s2.delete();
  } finally {
    child.kill();
  }
}
{
  const { port, child } = await startPeer(['sdk-tasks-server.mjs', '--poll-interval', '200', '--json-response']);
  try {
    const s = new Session(port, 'sdk-tasks-json', `${OURS}, --json-response`, ext);
    sessions.push(s);
    await s.initialize({ caps: {} });
    await s.call('tools/list', {}, { save: 'tools-list' });
    const t = Session.reply(await s.call('tools/call', { name: 'work_task', arguments: { duration_ms: 300 }, task: {} }, { save: 'tools-call-task' })).result.task;
    await s.call('tasks/get', { taskId: t.taskId }, { save: 'tasks-get-working' });
    await s.call('tasks/result', { taskId: t.taskId }, { save: 'tasks-result-blocking' });
    await s.delete();
  } finally {
    child.kill();
  }
}

const md = (s) => String(s).replaceAll('|', '\\|').replaceAll('\n', ' ');
const out = [
  '# Captured replies of real MCP servers',
  '',
  'Written by `internal/peers/testdata/capture.mjs` (`node capture.mjs` there, after `npm ci`): each file',
  'is the body of one HTTP reply exactly as it arrived on a loopback socket, chunked transfer',
  'coding removed and nothing else changed (SSE framing, priming events, blank lines, keep-alive',
  'comments if any). `.sse` files were sent as `text/event-stream`, `.json` files as',
  '`application/json`. Requests carried `Accept: application/json, text/event-stream` and, after',
  'initialize, `Mcp-Session-Id` and `MCP-Protocol-Version: 2025-11-25`. Chunks: the sizes of the',
  'HTTP chunks the body came in (one write of the server each). Ids, times and session ids',
  'change with every capture.',
  '',
  '| file | request | server | status | headers (Date omitted) | chunks | end |',
  '|---|---|---|---|---|---|---|',
];
for (const s of sessions) {
  for (const r of s.rows) {
    out.push(`| ${r.file} | ${md(r.what)} | ${md(r.pkg)} | ${md(r.status)} | ${md(r.hdrs)} | ${r.chunks.join('+') || '-'} | ${r.ended} |`);
  }
}
out.push('', 'Replies without a body (not saved):', '');
const seen = new Set();
for (const s of sessions) {
  for (const r of s.bodiless) {
    const key = `${s.prefix} ${r.what} ${r.status}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(`- ${s.prefix}: ${md(r.what)}: ${r.status}; ${md(r.hdrs)}; chunks ${r.chunks.join('+') || '-'} (${r.ended})`);
  }
}
writeFileSync(path.join(outDir, 'README.md'), out.join('\n') + '\n');
console.log(`${readdirSync(outDir).length} files in ${outDir}`);
process.exit(0);
