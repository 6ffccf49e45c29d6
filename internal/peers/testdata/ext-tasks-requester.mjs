#!/usr/bin/env node
// ext-tasks-requester: the official MCP Tasks requester, @modelcontextprotocol/ext-tasks, on
// the official client, @modelcontextprotocol/client, driving one tool call through its task
// lifecycle against a server URL, with nothing of tasksim in it. It lets the client
// negotiate the era (versionNegotiation auto: server/discover first, initialize as the
// fallback) and, on 2026-07-28, gives ext-tasks the raw request path and framing it needs
// (its README: rawDispatch and v2RequestFraming).
//
// Usage: node ext-tasks-requester.mjs URL TOOL [ARGS_JSON]
// Prints one JSON line on stdout: {"era": ..., "protocolVersion": ..., "outcome": ...,
// "result": ..., "inputs": N} (or {"error": ...}), and exits 0 when the call settled, 1
// otherwise. Form elicitations are answered with a string in every field.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const [url, tool, argsJSON] = process.argv.slice(2);
if (!url || !tool) {
  console.error('usage: node ext-tasks-requester.mjs URL TOOL [ARGS_JSON]');
  process.exit(2);
}
const args = argsJSON ? JSON.parse(argsJSON) : {};
const clientInfo = { name: 'ext-tasks-requester', version: '0.2.2' };
const MODERN = '2026-07-28';
const clientCapabilities = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };

// answer accepts every form elicitation with a string for each string field it asks for
// (tasksim's mock asks for {answer: string}); inputs counts what was answered.
let inputs = 0;
async function answer(request) {
  if (request.kind !== 'elicitation') throw new Error(`ext-tasks-requester answers elicitation only, not ${request.kind}`);
  inputs++;
  const props = request.params?.requestedSchema?.properties ?? {};
  const content = Object.fromEntries(Object.keys(props).map((k) => [k, 'ext-tasks-requester']));
  return { action: 'accept', content };
}

// rawDispatch is the host's request coordinator: it frames what ext-tasks hands it ({method,
// params}) as a JSON-RPC request with an id of its own, posts it as the 2026-07-28
// transport says (E22, E24), and returns the JSON-RPC response, read from a JSON body or an
// SSE stream.
let nextId = 1;
async function rawDispatch(payload, options) {
  const request = { jsonrpc: '2.0', id: `req-${nextId++}`, ...payload };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': request.method,
  };
  const name = request.params?.name ?? request.params?.taskId;
  if (name !== undefined) headers['Mcp-Name'] = String(name);
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === request.id) return msg;
    }
    throw new Error(`no response for request ${request.id} on the stream`);
  }
  return JSON.parse(text);
}

const out = {};
try {
  const client = new Client(clientInfo, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  out.era = client.getProtocolEra();
  const modern = out.era === 'modern';
  const session = createTaskSessionFromClient(client, modern
    ? { endpointId: url, rawDispatch, v2RequestFraming: { protocolVersion: MODERN, clientInfo, clientCapabilities }, onInputRequest: answer }
    : { endpointId: url, onInputRequest: answer });
  try {
    const execution = await session.callTool(tool, args);
    const settled = await execution.settle();
    out.outcome = settled.outcome;
    out.inputs = inputs;
    if (settled.outcome.status === 'completed') out.result = resultFromTaskOutcome(settled.outcome);
  } finally {
    await session.close();
    await client.close();
  }
} catch (err) {
  out.error = String(err?.stack ?? err);
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
