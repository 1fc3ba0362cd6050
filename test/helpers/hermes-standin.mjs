#!/usr/bin/env node
/**
 * A stand-in for NousResearch Hermes Agent's `hermes acp`, written from Hermes' documented
 * interfaces and the shapes its published ACP adapter sends (acp_adapter/tools.py: titles
 * `terminal: <first 80 characters>`, no rawInput or rawOutput for its own tools, the command as
 * `$ <command>` content, writes as diff blocks) — Hermes itself cannot be installed here (PyPI
 * only) and was not run. It speaks the Agent
 * Client Protocol — JSON-RPC 2.0, one message per line on stdio — reads `$HERMES_HOME/config.yaml`
 * (`model.default`, `model.base_url`, `mcp_servers.<name>.url`), calls the model over Chat
 * Completions with OPENAI_API_KEY, offers the MCP servers' tools as `mcp__<server>__<tool>` (as Hermes 0.19 names them) and two
 * native tools, `terminal` (asks `session/request_permission` first) and `write_file`, and
 * streams `session/update` notifications: agent_message_chunk, tool_call, tool_call_update.
 * Only what the Vera adapter relies on; logs go to stderr as in Hermes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { parse } from 'yaml';

if (process.argv[2] !== 'acp') {
  console.error('usage: hermes acp');
  process.exit(2);
}
const home = process.env.HERMES_HOME;
const config = parse(readFileSync(`${home}/config.yaml`, 'utf8'));
const openai = new OpenAI({ baseURL: config.model.base_url, apiKey: process.env.OPENAI_API_KEY ?? 'none', maxRetries: 0 });
const log = (...a) => console.error('[hermes stand-in]', ...a);
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const sessions = new Map();
const waiting = new Map();
let nextId = 1000;

function ask(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((res) => waiting.set(id, res));
}

const NATIVE = [
  {
    type: 'function',
    function: {
      name: 'terminal',
      description: 'Run a shell command in the working directory.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    },
  },
];

async function newSession(params) {
  const servers = { ...config.mcp_servers };
  for (const s of params.mcpServers ?? []) servers[s.name] = { url: s.url };
  const mcp = [];
  const tools = [...NATIVE];
  for (const [name, s] of Object.entries(servers)) {
    const client = new Client({ name: 'hermes-standin', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
    for (const t of (await client.listTools()).tools) {
      tools.push({ type: 'function', function: { name: `mcp__${name}__${t.name}`, description: t.description ?? '', parameters: t.inputSchema } });
      mcp.push({ full: `mcp__${name}__${t.name}`, tool: t.name, client });
    }
  }
  const id = `sess-${sessions.size + 1}`;
  sessions.set(id, { cwd: params.cwd, mcp, tools, messages: [{ role: 'system', content: 'You are Hermes (stand-in).' }] });
  log('session', id, 'with', tools.length, 'tools');
  return { sessionId: id };
}

/** Hermes' one-line preview of a tool's primary argument (agent/display.py): whitespace collapsed, cut at 80. */
const PRIMARY = { terminal: 'command', write_file: 'path', read_file: 'path', patch: 'path', web_extract: 'urls' };
function preview(name, args) {
  const key = PRIMARY[name] ?? Object.keys(args).find((k) => args[k]);
  if (!key || args[key] === undefined) return undefined;
  const text = String(Array.isArray(args[key]) ? args[key].join(', ') : args[key])
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
const text = (t) => ({ type: 'content', content: { type: 'text', text: t } });
const POLISHED = new Set(['terminal', 'write_file', 'read_file', 'patch']);

/**
 * A tool call's ACP events as Hermes' acp_adapter/tools.py builds them: the start has a title
 * `<tool>: <preview>` (no rawInput for its own tools), the terminal's full command only as
 * `$ <command>` content, a write as a diff block and a location; the completion has formatted
 * text content and no rawOutput for its own tools or for structured results.
 */
async function runTool(session, sessionId, call) {
  const name = call.function.name;
  const args = JSON.parse(call.function.arguments || '{}');
  const kind = name === 'terminal' ? 'execute' : name === 'write_file' ? 'edit' : name === 'read_file' ? 'read' : 'other';
  const update = (u) => send({ method: 'session/update', params: { sessionId, update: u } });
  const shown = preview(name, args);
  const title = shown ? `${name}: ${shown}` : name;
  const locations = typeof args.path === 'string' ? [{ path: args.path }] : [];
  // HERMES_STANDIN_BARE=1: the start carries the title alone (Hermes' fallback when a start render fails).
  const bare = process.env.HERMES_STANDIN_BARE === '1';
  let content;
  let rawInput;
  if (bare) content = undefined;
  else if (name === 'terminal') content = [text(`$ ${args.command ?? ''}`)];
  else if (name === 'write_file') content = [{ type: 'diff', path: args.path, newText: String(args.content ?? '') }];
  else if (!POLISHED.has(name)) {
    content = [text(JSON.stringify(args, null, 2))];
    rawInput = args;
  }
  update({
    sessionUpdate: 'tool_call',
    toolCallId: call.id,
    title,
    kind,
    ...(content ? { content } : {}),
    locations: bare ? [] : locations,
    ...(rawInput ? { rawInput } : {}),
  });
  let result;
  let failed = false;
  const mcp = session.mcp.find((m) => m.full === name);
  if (mcp) {
    const answer = await mcp.client.callTool({ name: mcp.tool, arguments: args });
    result = answer.content.map((c) => c.text ?? '').join('\n');
    failed = answer.isError === true;
  } else if (name === 'terminal') {
    const permission = await ask('session/request_permission', {
      sessionId,
      toolCall: { toolCallId: call.id, title, kind },
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
      ],
    });
    if (permission?.outcome?.optionId !== 'allow') result = JSON.stringify({ output: '', exit_code: -1, error: 'denied' });
    else {
      result = await new Promise((res) =>
        execFile('sh', ['-c', args.command], { cwd: session.cwd }, (error, stdout, stderr) => {
          res(JSON.stringify({ output: `${stdout}${stderr}`, exit_code: error ? (error.code ?? 1) : 0, error: null }));
        }),
      );
    }
    failed = JSON.parse(result).exit_code !== 0;
  } else if (name === 'write_file') {
    // Like Hermes' write_file: parent directories are created.
    mkdirSync(dirname(resolve(session.cwd, args.path)), { recursive: true });
    writeFileSync(resolve(session.cwd, args.path), args.content);
    result = JSON.stringify({ success: true, path: args.path, bytes_written: Buffer.byteLength(args.content) });
  } else {
    result = `unknown tool ${name}`;
    failed = true;
  }
  let structured;
  try {
    structured = JSON.parse(result);
  } catch {
    structured = undefined;
  }
  // The generic formatter: a header, then one `- **key:** value` line per field.
  const formatted =
    structured && typeof structured === 'object'
      ? [
          `${name} result`,
          ...Object.entries(structured)
            .filter(([, v]) => v !== null && v !== '')
            .map(([k, v]) => `- **${k}:** ${typeof v === 'object' ? JSON.stringify(v) : v}`),
        ].join('\n')
      : result;
  update({
    sessionUpdate: 'tool_call_update',
    toolCallId: call.id,
    kind,
    status: failed ? 'failed' : 'completed',
    content: [text(formatted)],
    ...(POLISHED.has(name) || structured !== undefined ? {} : { rawOutput: result }),
  });
  return result;
}

async function prompt(params) {
  const session = sessions.get(params.sessionId);
  session.messages.push({ role: 'user', content: params.prompt.map((p) => p.text ?? '').join('\n') });
  const usage = { inputTokens: 0, outputTokens: 0 };
  for (let round = 0; round < 20; round++) {
    const completion = await openai.chat.completions.create({ model: config.model.default, messages: session.messages, tools: session.tools });
    usage.inputTokens += completion.usage?.prompt_tokens ?? 0;
    usage.outputTokens += completion.usage?.completion_tokens ?? 0;
    const reply = completion.choices[0].message;
    session.messages.push({ role: 'assistant', content: reply.content ?? '', ...(reply.tool_calls?.length ? { tool_calls: reply.tool_calls } : {}) });
    if (!reply.tool_calls?.length) {
      send({
        method: 'session/update',
        params: { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: reply.content ?? '' } } },
      });
      return { stopReason: 'end_turn', usage };
    }
    // Like Hermes: what the model said with its tool calls is streamed before them.
    if (reply.content)
      send({
        method: 'session/update',
        params: { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: reply.content } } },
      });
    for (const call of reply.tool_calls)
      session.messages.push({ role: 'tool', tool_call_id: call.id, content: await runTool(session, params.sessionId, call) });
  }
  return { stopReason: 'max_turn_requests', usage };
}

const handlers = {
  initialize: async () => ({
    protocolVersion: 1,
    agentInfo: { name: 'hermes-standin', version: '0.0.0' },
    agentCapabilities: { loadSession: false, mcpCapabilities: { http: true } },
    authMethods: [],
  }),
  'session/new': newSession,
  'session/prompt': prompt,
};

createInterface({ input: process.stdin })
  .on('line', async (line) => {
    if (!line.trim()) return;
    const message = JSON.parse(line);
    if (message.method === undefined) {
      waiting.get(message.id)?.(message.result);
      waiting.delete(message.id);
      return;
    }
    const handler = handlers[message.method];
    try {
      if (!handler) throw Object.assign(new Error(`unknown method ${message.method}`), { code: -32601 });
      send({ id: message.id, result: await handler(message.params) });
    } catch (error) {
      log('error:', error.message);
      send({ id: message.id, error: { code: error.code ?? -32603, message: error.message } });
    }
  })
  .on('close', () => process.exit(0));
