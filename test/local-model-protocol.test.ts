import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeGguf, readGgufHeader } from '../provider/local-model/gguf-header.js';
import { chatRequestSchema, prepareChat, toReply } from '../provider/local-model/chat-protocol.js';
import { parseLocalModelURL } from '../provider/local-model/endpoint.js';
import { gbnfFor } from '../provider/local-model/gbnf.js';
import { grammarSchema } from '../provider/local-model/json-grammar.js';
import { talksToRemoteProvider } from '../plugin/vera-plugin.js';
import { veraOptions } from '../plugin/options.js';

/**
 * The parts of the local model provider that need no model: the JSON grammar a small model's
 * output is held to, the tool protocol it reads and writes, the `local:` URL, the GGUF header
 * reader. The model itself is exercised by the local-model suite (test/local-model/).
 */

const listEmails = {
  type: 'object',
  properties: {
    folder: { type: 'string', enum: ['inbox', 'sent', 'trash'] },
    unread_only: { type: 'boolean' },
    limit: { type: 'integer', minimum: 1 },
  },
};
const readEmail = { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] };
const tools = [
  { type: 'function' as const, function: { name: 'list_emails', description: 'List emails.', parameters: listEmails } },
  { type: 'function' as const, function: { name: 'read_email', description: 'Read one email.', parameters: readEmail } },
];

describe('the JSON grammar (json-grammar.ts)', () => {
  it('keeps what the grammar can hold (types, enums, required keys) and drops what it cannot (numeric bounds)', () => {
    const g = grammarSchema({ ...listEmails, required: ['folder'] });
    expect(g).toEqual({
      type: 'object',
      properties: { folder: { enum: ['inbox', 'sent', 'trash'] }, unread_only: { type: 'boolean' }, limit: { type: 'integer' } },
      required: ['folder'],
      additionalProperties: false,
    });
  });

  it('bounds what a small model loops on: keys of a free-form object, items of an unbounded list', () => {
    expect(grammarSchema({ type: 'object' })).toMatchObject({ type: 'object', properties: {}, maxProperties: 16 });
    expect(grammarSchema({ type: 'object', additionalProperties: false })).not.toHaveProperty('maxProperties');
    expect(grammarSchema({ type: 'array', items: { type: 'string' } })).toEqual({ type: 'array', items: { type: 'string' }, maxItems: 64 });
    expect(grammarSchema({ type: 'array', items: { type: 'string' }, maxItems: 3 })).toMatchObject({ maxItems: 3 });
  });

  it('turns anyOf into oneOf, a type list into alternatives, and a schema that says nothing into any scalar', () => {
    expect(grammarSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toEqual({ oneOf: [{ type: 'string' }, { type: 'number' }] });
    expect(grammarSchema({ type: ['string', 'object'], properties: { a: { type: 'string' } }, required: ['a'] })).toEqual({
      oneOf: [{ type: ['string'] }, { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }],
    });
    expect(grammarSchema({})).toEqual({ type: ['string', 'number', 'boolean', 'null'] });
  });
});

describe('the GBNF writer (gbnf.ts)', () => {
  it('writes a required key always and an optional one only if the model chooses, in the schema order', () => {
    const grammar = gbnfFor(
      grammarSchema({ type: 'object', properties: { to: { type: 'string' }, cc: { type: 'string' }, urgent: { type: 'boolean' } }, required: ['to'] }),
    );
    const root = grammar.split('\n')[0]!;
    // `{"to": …` then each optional pair behind its own `(…)?`.
    expect(root).toMatch(/^root ::= "\{" r\d+ \("," ws r\d+\)\? \("," ws r\d+\)\? "\}"$/);
    expect(grammar).toContain('"\\"to\\"" ":" ws');
    expect(grammar).toContain('"\\"urgent\\"" ":" ws');
  });

  it('with no key required, any ordered subset of the keys (a chain of skippable links), and {} itself', () => {
    const grammar = gbnfFor(grammarSchema(listEmails));
    expect(grammar.split('\n')[0]).toMatch(/^root ::= "\{" \(r\d+\)\? "\}"$/);
    expect(grammar).toMatch(/r\d+ ::= r\d+ \("," ws r\d+\)\? \| r\d+/);
  });

  it('bounds lists and free-form objects, and names $defs as rules', () => {
    expect(gbnfFor({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 })).toMatch(/^root ::= "\[" r\d+ \("," ws r\d+\)\{0,2\} "\]"/);
    expect(gbnfFor(grammarSchema({ type: 'object' }))).toMatch(/\{0,15\}\)\? "\}"/);
    const defs = gbnfFor(
      grammarSchema({
        $defs: { Step: { type: 'object', properties: { op: { const: 'x' } }, required: ['op'] } },
        type: 'array',
        items: { $ref: '#/$defs/Step' },
      }),
    );
    expect(defs).toMatch(/^def-step ::= "\{" r\d+ "\}"$/m);
    expect(defs).toContain('"\\"x\\""');
  });
});

describe('the tool protocol (chat-protocol.ts)', () => {
  const request = (body: Record<string, unknown>) => chatRequestSchema.parse({ model: 'm', ...body });

  it('offers the tools in the system turn and holds the turn to one call per tool or an answer', () => {
    const prepared = prepareChat(
      request({
        messages: [
          { role: 'system', content: 'You help.' },
          { role: 'user', content: 'What does the newsletter say?' },
        ],
        tools,
      }),
    );
    expect(prepared.history[0]).toMatchObject({ type: 'system' });
    const system = (prepared.history[0] as { text: string }).text;
    expect(system).toContain('You help.');
    // Each tool's whole signature, one JSON line, as the model's chat template shows tools.
    const signatures = system
      .split('<tools>\n')[1]!
      .split('\n</tools>')[0]!
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(signatures.map((s) => s.function.name)).toEqual(['list_emails', 'read_email']);
    expect(signatures[1]).toEqual({
      type: 'function',
      function: { name: 'read_email', description: 'Read one email.', parameters: tools[1]!.function.parameters },
    });
    const branches = (prepared.schema!.oneOf as Array<{ properties: { tool: { const: string } } }>).map((b) => b.properties.tool.const);
    expect(branches).toEqual(['list_emails', 'read_email', 'none']);
    expect(prepared.toolProtocol).toBe(true);
  });

  it('shows earlier calls in the form the model writes them, and results as one turn per round', () => {
    const prepared = prepareChat(
      request({
        messages: [
          { role: 'user', content: 'Read both.' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'read_email', arguments: '{"id":"m-1"}' } },
              { id: 'c2', type: 'function', function: { name: 'read_email', arguments: '{"id":"m-2"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'one' },
          { role: 'tool', tool_call_id: 'c2', content: 'two' },
        ],
        tools,
      }),
    );
    expect(prepared.history.slice(1)).toEqual([
      { type: 'user', text: 'Read both.' },
      { type: 'model', response: ['{"tool":"read_email","arguments":{"id":"m-1"}}\n{"tool":"read_email","arguments":{"id":"m-2"}}'] },
      { type: 'user', text: 'Result of read_email: one\n\nResult of read_email: two' },
    ]);
  });

  it('tool_choice: none offers nothing, required drops the answer, a named function offers that one', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    expect(prepareChat(request({ messages, tools, tool_choice: 'none' })).schema).toBeUndefined();
    const required = prepareChat(request({ messages, tools, tool_choice: 'required' })).schema!.oneOf as unknown[];
    expect(required).toHaveLength(2);
    const forced = prepareChat(request({ messages, tools, tool_choice: { type: 'function', function: { name: 'read_email' } } })).schema!.oneOf as Array<{
      properties: { tool: { const: string } };
    }>;
    expect(forced.map((b) => b.properties.tool.const)).toEqual(['read_email']);
  });

  it('a json_schema response_format is the grammar, and gets the long default token limit', () => {
    const schema = { type: 'object', properties: { capital: { type: 'string' }, note: { type: 'string' } }, required: ['capital'] };
    const prepared = prepareChat(
      request({ messages: [{ role: 'user', content: 'France?' }], response_format: { type: 'json_schema', json_schema: { name: 'c', schema } } }),
    );
    expect(prepared.schema).toMatchObject({ type: 'object', required: ['capital'] });
    expect(prepared.maxTokens).toBe(4096);
    expect(prepareChat(request({ messages: [{ role: 'user', content: 'hi' }], tools })).maxTokens).toBe(1024);
    expect(toReply('{"capital":"Paris"}', prepared, false)).toEqual({ content: '{"capital":"Paris"}', finish_reason: 'stop' });
  });

  it('the model output becomes a Chat Completions tool call, an answer, or a cut-off text', () => {
    const prepared = prepareChat(request({ messages: [{ role: 'user', content: 'list' }], tools }));
    const call = toReply('{"tool":"list_emails","arguments":{"folder":"inbox"}}', prepared, false);
    expect(call.finish_reason).toBe('tool_calls');
    expect(call.tool_calls![0]!.function).toEqual({ name: 'list_emails', arguments: '{"folder":"inbox"}' });
    expect(call.tool_calls![0]!.id).toMatch(/^call_/);
    expect(toReply('{"tool":"none","answer":"Done."}', prepared, false)).toEqual({ content: 'Done.', finish_reason: 'stop' });
    expect(toReply('{"tool":"read_email","argu', prepared, true)).toEqual({ content: '{"tool":"read_email","argu', finish_reason: 'length' });
  });
});

describe('local:<name> URLs', () => {
  it('names a packaged model and its settings; an unknown model or setting is an error naming what is known', () => {
    expect(parseLocalModelURL('local:qwen2.5-coder-1.5b')).toEqual({ name: 'qwen2.5-coder-1.5b' });
    expect(parseLocalModelURL('local:smollm2-135m?parallel=2&threads=1&context=4096')).toEqual({
      name: 'smollm2-135m',
      parallel: 2,
      threads: 1,
      contextSize: 4096,
    });
    expect(() => parseLocalModelURL('local:gpt-9')).toThrow(/no packaged model "gpt-9" \(known: qwen2\.5-coder-1\.5b, smollm2-135m\)/);
    expect(() => parseLocalModelURL('local:smollm2-135m?paralel=2')).toThrow(/unknown setting "paralel"/);
    expect(() => parseLocalModelURL('local:smollm2-135m?parallel=0')).toThrow(/parallel must be an integer from 1 to 16/);
  });

  it('is not a remote provider: no model proxy, counterfactual runs on by default', () => {
    const options = (baseURL: string) => veraOptions.parse({ agent: { type: 'reference', model: 'm', baseURL } });
    expect(talksToRemoteProvider(options('local:qwen2.5-coder-1.5b'))).toBe(false);
    expect(talksToRemoteProvider(options('https://api.example.com/v1'))).toBe(true);
  });
});

describe('the GGUF header reader', () => {
  /** A GGUF v3 header with the given string and uint32 values and no tensors. */
  function gguf(values: Record<string, string | number>): Buffer {
    const parts: Buffer[] = [Buffer.from('GGUF', 'latin1')];
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n);
      return b;
    };
    const u64 = (n: number) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(BigInt(n));
      return b;
    };
    const str = (s: string) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
    parts.push(u32(3), u64(0), u64(Object.keys(values).length));
    for (const [key, value] of Object.entries(values)) parts.push(str(key), ...(typeof value === 'string' ? [u32(8), str(value)] : [u32(4), u32(value)]));
    return Buffer.concat(parts);
  }

  it('reads who the model says it is, its licence, context and chat template', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-gguf-'));
    const file = join(dir, 'm.gguf');
    await writeFile(
      file,
      gguf({
        'general.architecture': 'qwen2',
        'general.name': 'Tiny Coder',
        'general.license': 'apache-2.0',
        'qwen2.context_length': 32768,
        'tokenizer.chat_template': '{% if tools %}<tool_call>{% endif %}',
      }),
    );
    expect(describeGguf(readGgufHeader(file))).toEqual({
      ggufVersion: 3,
      tensors: 0,
      architecture: 'qwen2',
      name: 'Tiny Coder',
      license: 'apache-2.0',
      contextLength: 32768,
      chatTemplate: 'embedded, with tool calls',
    });
  });

  it('refuses a file that is not GGUF, and one cut inside its header', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-gguf-'));
    await writeFile(join(dir, 'a.bin'), Buffer.from('PK\u0003\u0004 not a model'));
    expect(() => readGgufHeader(join(dir, 'a.bin'))).toThrow(/is not a GGUF file \(it starts with "PK/);
    await writeFile(join(dir, 'b.gguf'), gguf({ 'general.name': 'cut' }).subarray(0, 30));
    expect(() => readGgufHeader(join(dir, 'b.gguf'))).toThrow(/ends inside its GGUF header/);
  });
});
