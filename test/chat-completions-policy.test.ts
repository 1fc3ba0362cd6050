import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletionsPolicy, chatReplyToModelReply } from '../testing/chat-completions-policy.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/scripted-model-server.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * The wire bridge that lets Codex (Responses API), Claude Code (Messages) and Gemini CLI use a
 * model that serves only Chat Completions (the packaged local model): real requests the programs
 * sent (test/fixtures/agent-wire/) go to a scripted server whose policy forwards them to a
 * Chat Completions endpoint — here a second scripted server on a script, standing in for the model.
 */
function fixture(program: string): Array<{ path: string; body: Record<string, unknown> }> {
  return JSON.parse(readFileSync(join(REPO, 'test/fixtures/agent-wire', `${program}.json`), 'utf8')).requests;
}

const started: StartedModelServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function pair(replies: Array<{ text?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> }>) {
  const model = await startScriptedModelServer({ script: replies.map((reply) => ({ reply })) });
  const bridge = await startScriptedModelServer({ policy: chatCompletionsPolicy({ baseURL: model.url, model: 'local-model' }) });
  started.push(model, bridge);
  return { model, bridge };
}

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
};

describe('chatCompletionsPolicy: another wire in, Chat Completions out', () => {
  it("Codex's first turn: its tools and messages reach the model as Chat Completions, the model's call goes back as a namespaced function_call", async () => {
    const { model, bridge } = await pair([{ toolCalls: [{ name: 'mcp__vera__list_emails', arguments: { folder: 'inbox' } }] }]);
    const [first] = fixture('codex');
    const reply = await post(`${bridge.url}/responses`, { ...first!.body, stream: false });
    expect(reply.status).toBe(200);
    const call = reply.body.output.find((o: any) => o.type === 'function_call');
    expect(call).toMatchObject({ name: 'list_emails', namespace: 'mcp__vera' });
    expect(JSON.parse(call.arguments)).toEqual({ folder: 'inbox' });

    const sent = model.requests[0]!.body as any;
    expect(model.requests[0]!.path).toBe('/v1/chat/completions');
    expect(sent.model).toBe('local-model');
    const offered = sent.tools.map((t: any) => t.function.name);
    expect(offered).toContain('mcp__vera__forward_email');
    expect(sent.tools.find((t: any) => t.function.name === 'mcp__vera__read_email').function.parameters).toMatchObject({
      type: 'object',
      properties: { id: expect.anything() },
    });
    expect(sent.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^Please go through my inbox/) });
  });

  it("Codex's second turn: earlier calls and their outputs are assistant tool_calls and tool messages with matching ids; a text reply goes back as a message", async () => {
    const { model, bridge } = await pair([{ text: 'I will not forward the reset code.' }]);
    const [, last] = fixture('codex');
    const reply = await post(`${bridge.url}/responses`, { ...last!.body, stream: false });
    expect(reply.status).toBe(200);
    const message = reply.body.output.find((o: any) => o.type === 'message');
    expect(message.content[0].text).toBe('I will not forward the reset code.');

    const sent = model.requests[0]!.body as any;
    const calls = sent.messages.flatMap((m: any) => m.tool_calls ?? []);
    expect(calls.map((c: any) => c.function.name)).toEqual(['mcp__vera__list_emails', 'mcp__vera__read_email']);
    const results = sent.messages.filter((m: any) => m.role === 'tool');
    expect(results.map((r: any) => r.tool_call_id)).toEqual(calls.map((c: any) => c.id));
    expect(JSON.parse(results[1].content)).toMatchObject({ id: 'm-1' });
  });

  it("Claude Code's Messages request: the call comes back as a tool_use block", async () => {
    const { model, bridge } = await pair([{ toolCalls: [{ name: 'mcp__vera__read_email', arguments: { id: 'm-1' } }] }]);
    const [first] = fixture('claude-code');
    const reply = await post(`${bridge.origin}/v1/messages`, { ...first!.body, stream: false });
    expect(reply.status).toBe(200);
    expect(reply.body.content.find((c: any) => c.type === 'tool_use')).toMatchObject({ name: 'mcp__vera__read_email', input: { id: 'm-1' } });
    expect((model.requests[0]!.body as any).messages[0].role).toBe('system');
  });

  it("Gemini CLI's generateContent request: the call comes back as a functionCall part", async () => {
    const { model, bridge } = await pair([{ toolCalls: [{ name: 'list_emails', arguments: { folder: 'inbox' } }] }]);
    const [first] = fixture('gemini-cli');
    const reply = await post(`${bridge.origin}/v1beta/models/vera-scripted:generateContent`, first!.body);
    expect(reply.status).toBe(200);
    const parts = reply.body.candidates[0].content.parts;
    expect(parts.find((p: any) => p.functionCall)?.functionCall).toMatchObject({ args: { folder: 'inbox' } });
    const sent = model.requests[0]!.body as any;
    expect(sent.tools.length).toBeGreaterThan(0);
    expect(sent.messages.some((m: any) => m.role === 'user')).toBe(true);
  });

  it('an endpoint that fails is an error the agent sees, not an empty reply', async () => {
    const model = await startScriptedModelServer({ script: [{ error: { status: 503, message: 'overloaded' } }] });
    const bridge = await startScriptedModelServer({ policy: chatCompletionsPolicy({ baseURL: model.url }) });
    started.push(model, bridge);
    const [first] = fixture('codex');
    const reply = await post(`${bridge.url}/responses`, { ...first!.body, stream: false });
    expect(reply.status).toBeGreaterThanOrEqual(500);
    expect(JSON.stringify(reply.body)).toContain('503');
  });

  it('reads tool calls whose arguments are not JSON as calls with none, and a reply without a message as an error', () => {
    expect(
      chatReplyToModelReply({
        choices: [{ message: { content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '{oops' } }] } }],
      }),
    ).toEqual({ toolCalls: [{ name: 'x', arguments: {} }] });
    expect(() => chatReplyToModelReply({ error: { message: 'no' } })).toThrow(/without a message/);
  });
});
