#!/usr/bin/env node
// sdk-tasks-server: an MCP Tasks server (protocol 2025-11-25) written on the official
// TypeScript SDK, @modelcontextprotocol/sdk, with nothing of tasksim in it. Tasks are the
// SDK's own: McpServer.experimental.tasks.registerToolTask, its InMemoryTaskStore (scoped
// to the session that created the task), its InMemoryTaskMessageQueue (server requests
// queued for a task and delivered on the tasks/result stream), and the tasks/get,
// tasks/result, tasks/list and tasks/cancel handlers the SDK installs when a task store is
// given. What this file adds is only the work: timers, a payload, one elicitation.
//
// Usage: node sdk-tasks-server.mjs [--port N] [--poll-interval MS] [--ttl MS] [--json-response]
//   --port           0 (default) picks a free port; the server binds 127.0.0.1 only
//   --poll-interval  the pollInterval every task advertises (default 250)
//   --ttl            the ttl granted when a call asks for none (default 60000); a requested
//                    ttl is clamped to 600000
//   --json-response  the SDK's enableJsonResponse: replies as application/json, not SSE
//                    (the SDK then has no stream to deliver elicitations on)
// Prints its endpoint, http://127.0.0.1:PORT/mcp, as the first line on stdout.
//
// Tools (the same names and arguments as tasksim's embedded mock, so scenarios run as is):
//   work       taskSupport optional  (called without `task`, the SDK makes a task itself
//                                     and polls it to the end before it answers)
//   work_task  taskSupport required
//   work_sync  no taskSupport (forbidden): a plain call
// Arguments of work and work_task:
//   duration_ms     how long the task works (default 500)
//   payload_bytes   size of the result's text (default: a short sentence)
//   input_required  true: halfway, ask the client one form elicitation ({answer: string})
//                   and go on only after the answer; decline or cancel fail the task
//   outcome         completed (default) | failed (an isError result: the task ends failed)
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';

const { values: opt } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'poll-interval': { type: 'string', default: '250' },
    ttl: { type: 'string', default: '60000' },
    'json-response': { type: 'boolean', default: false },
  },
});
const POLL_MS = Number(opt['poll-interval']);
const TTL_MS = Number(opt.ttl);
const MAX_TTL_MS = 600000;

// One store and one queue for the whole process: the store keeps each task to the session
// that created it, as the SDK documents.
const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

const workArgs = {
  duration_ms: z.number().int().min(0).max(600000).default(500).describe('how long the task works, ms'),
  payload_bytes: z.number().int().min(0).max(16 << 20).optional().describe('size of the result text, bytes'),
  input_required: z.boolean().default(false).describe('ask the client one question halfway'),
  outcome: z.enum(['completed', 'failed']).default('completed').describe('failed: an isError result'),
};

function text(n, fallback) {
  if (n === undefined) return fallback;
  // Printable ASCII with a newline every 100 bytes: one JSON string, easy to check whole.
  const line = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3).slice(0, 99) + '\n';
  return line.repeat(Math.ceil(n / line.length)).slice(0, n);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// work runs one task to its end through the SDK's request-scoped store, which also sends
// notifications/tasks/status on every change. A store call on a task already terminal
// (cancelled meanwhile) or gone (ttl) throws: the work then just stops.
async function work(taskId, args, extra) {
  const store = extra.taskStore;
  let note = '';
  if (args.input_required) {
    await sleep(args.duration_ms / 2);
    // The SDK sets the task input_required and queues the request for tasks/result.
    const answer = await extra.sendRequest({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'sdk-tasks-server needs one answer to go on',
        requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      },
    }, ElicitResultSchema, { relatedTask: { taskId } });
    if (answer.action !== 'accept') {
      await store.storeTaskResult(taskId, 'failed', {
        content: [{ type: 'text', text: `the client answered ${answer.action}` }], isError: true,
      });
      return;
    }
    note = ` (answer: ${JSON.stringify(answer.content ?? {})})`;
    await store.updateTaskStatus(taskId, 'working', 'answer received');
    await sleep(args.duration_ms / 2);
  } else {
    await sleep(args.duration_ms);
  }
  if (args.outcome === 'failed') {
    await store.storeTaskResult(taskId, 'failed', {
      content: [{ type: 'text', text: 'failed as asked (outcome: failed)' }], isError: true,
    });
    return;
  }
  await store.storeTaskResult(taskId, 'completed', {
    content: [{ type: 'text', text: text(args.payload_bytes, `worked ${args.duration_ms} ms${note}`) }],
  });
}

const taskHandler = {
  async createTask(args, extra) {
    const ttl = Math.min(extra.taskRequestedTtl ?? TTL_MS, MAX_TTL_MS);
    const task = await extra.taskStore.createTask({ ttl, pollInterval: POLL_MS });
    work(task.taskId, args, extra).catch(async (err) => {
      const msg = err instanceof Error ? err.message : String(err);
      try {
        await extra.taskStore.storeTaskResult(task.taskId, 'failed', {
          content: [{ type: 'text', text: msg }], isError: true,
        });
      } catch {
        // Terminal already (cancelled) or gone (ttl): nothing to record.
        console.error(`task ${task.taskId}: ${msg}`);
      }
    });
    return { task };
  },
  // The SDK answers tasks/get and tasks/result from the store itself; these two are
  // required by registerToolTask's type.
  async getTask(_args, extra) {
    return await extra.taskStore.getTask(extra.taskId);
  },
  async getTaskResult(_args, extra) {
    return await extra.taskStore.getTaskResult(extra.taskId);
  },
};

function newServer() {
  const server = new McpServer({ name: 'sdk-tasks-server', version: '1.0.0' }, {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore,
    taskMessageQueue,
  });
  for (const [name, taskSupport] of [['work', 'optional'], ['work_task', 'required']]) {
    server.experimental.tasks.registerToolTask(name, {
      description: `Works duration_ms as a task (taskSupport ${taskSupport})`,
      inputSchema: workArgs,
      execution: { taskSupport },
    }, taskHandler);
  }
  server.registerTool('work_sync', {
    description: 'Works duration_ms and answers; never a task',
    inputSchema: { duration_ms: workArgs.duration_ms },
  }, async ({ duration_ms }) => {
    await sleep(duration_ms);
    return { content: [{ type: 'text', text: `worked ${duration_ms} ms` }] };
  });
  return server;
}

// The session bookkeeping every stateful SDK server writes: one transport and one McpServer
// per Mcp-Session-Id. Unknown ids get 404 (the session ended: initialize again), a request
// without one that is not initialize gets 400.
const transports = new Map();
const app = createMcpExpressApp({ host: '127.0.0.1' });

function rpcError(res, status, message) {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

app.post('/mcp', async (req, res) => {
  const sid = req.headers['mcp-session-id'];
  if (sid !== undefined) {
    const t = transports.get(sid);
    if (!t) return rpcError(res, 404, 'Session not found');
    return t.handleRequest(req, res, req.body);
  }
  if (req.body?.method !== 'initialize') return rpcError(res, 400, 'Mcp-Session-Id header is required');
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: opt['json-response'],
    onsessioninitialized: (id) => transports.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) transports.delete(transport.sessionId);
  };
  await newServer().connect(transport);
  await transport.handleRequest(req, res, req.body);
});

for (const method of ['get', 'delete']) {
  app[method]('/mcp', async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    if (sid === undefined) return rpcError(res, 400, 'Mcp-Session-Id header is required');
    const t = transports.get(sid);
    if (!t) return rpcError(res, 404, 'Session not found');
    await t.handleRequest(req, res);
  });
}

const httpServer = app.listen(Number(opt.port), '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stdout.write(`http://127.0.0.1:${port}/mcp\n`);
});
httpServer.on('error', (err) => {
  console.error(`sdk-tasks-server: ${err.message}`);
  process.exit(1);
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    taskStore.cleanup();
    httpServer.close();
    process.exit(0);
  });
}
