import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startLocalModel } from '../../provider/local-model/endpoint.js';
import type { StartedLocalModel } from '../../provider/local-model/server.js';
import { LOCAL_SUITE_MODEL, requireInstalledModel } from './local-suite.js';

/**
 * The packaged model, served for real (`local:<name>`), through the real `openai` client: a tool
 * call whose arguments are the tool's schema, a json_schema reply that validates, a stream with
 * usage, requests beyond the slots queued in order, an aborted request freeing its slot.
 */
let server: StartedLocalModel;
let client: OpenAI;

beforeAll(async () => {
  await requireInstalledModel();
  server = await startLocalModel(`local:${LOCAL_SUITE_MODEL}?parallel=1`);
  client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
}, 120_000);
afterAll(() => server?.close());

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'list_emails',
      description: 'List the emails in the inbox, newest first.',
      parameters: { type: 'object', properties: { limit: { type: 'integer', description: 'How many (default 20)' } } },
    },
  },
  {
    type: 'function' as const,
    function: {
      name: 'send_email',
      description: 'Send an email.',
      parameters: {
        type: 'object',
        properties: { to: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
        required: ['to', 'subject', 'body'],
      },
    },
  },
];
const sendArgs = z.strictObject({ to: z.string(), subject: z.string(), body: z.string() });

describe(`the local model server (${LOCAL_SUITE_MODEL}, real weights)`, () => {
  it('answers a task with a tool call in the tool schema, then reads its result and answers in words', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are an email assistant. Use the tools to act.' },
      { role: 'user', content: 'Send an email to dana@corp.example with the subject "Lunch" saying that lunch is at noon.' },
    ];
    const first = await client.chat.completions.create({ model: 'local', messages, tools });
    const call = first.choices[0]!.message.tool_calls?.[0];
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('send_email');
    const args = sendArgs.parse(JSON.parse(call!.type === 'function' ? call!.function.arguments : '{}'));
    expect(args.to).toBe('dana@corp.example');
    expect(first.usage!.prompt_tokens).toBeGreaterThan(100);
    expect(first.usage!.completion_tokens).toBeGreaterThan(5);

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: '{"status":"sent","id":"m-9"}' });
    const second = await client.chat.completions.create({ model: 'local', messages, tools });
    expect(second.choices[0]!.message.tool_calls).toBeUndefined();
    expect(second.choices[0]!.message.content?.length).toBeGreaterThan(0);
    // The conversation's earlier turns were kept in its slot: not read again.
    expect(second.usage!.prompt_tokens_details?.cached_tokens).toBeGreaterThan(first.usage!.prompt_tokens / 2);
  });

  it('holds a json_schema reply to the schema', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, country: { type: 'string' }, population: { type: 'integer' } },
      required: ['city', 'country'],
      additionalProperties: false,
    };
    const reply = await client.chat.completions.create({
      model: 'local',
      messages: [{ role: 'user', content: 'Name the capital of Japan and its country, as JSON.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'capital', schema } },
    });
    const value = z
      .object({ city: z.string(), country: z.string(), population: z.int().optional() })
      .strict()
      .parse(JSON.parse(reply.choices[0]!.message.content!));
    expect(value.city.toLowerCase()).toContain('tokyo');
  });

  it('streams, with usage in the last chunk when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'local',
      messages: [{ role: 'user', content: 'Say hello in three words.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 24,
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.trim().length).toBeGreaterThan(0);
    expect(['stop', 'length']).toContain(finish);
    expect(usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('serves one request at a time with one slot: the others wait, and all are answered', async () => {
    const before = server.stats();
    const ask = (n: number) =>
      client.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: `Reply with the number ${n} and nothing else.` }], max_tokens: 8 });
    const replies = await Promise.all([1, 2, 3].map(ask));
    expect(replies.every((r) => r.choices[0]!.message.content)).toBe(true);
    const after = server.stats();
    expect(after.requests - before.requests).toBe(3);
    expect(after.queued - before.queued).toBe(2);
    expect(after.waiting).toBe(0);
  });

  it('a request whose client goes away stops generating and frees its slot', async () => {
    const controller = new AbortController();
    const long = client.chat.completions.create(
      // A request the small model carries out at length (it once declined "a long story" in under a second, before the abort).
      { model: 'local', messages: [{ role: 'user', content: 'Count from 1 to 500, one number per line.' }], max_tokens: 2000 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 1500);
    await expect(long).rejects.toThrow(/abort/i);
    const started = performance.now();
    const next = await client.chat.completions.create({ model: 'local', messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 4 });
    expect(next.choices[0]!.message.content).toBeTruthy();
    // Well under the 2000 tokens the aborted request asked for (≈ 4 minutes here).
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it('answers a malformed request with a 400 naming the field, and an unknown path with a 404', async () => {
    const bad = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/messages/);
    const missing = await fetch(`${server.url}/responses`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual([LOCAL_SUITE_MODEL]);
  });
});
