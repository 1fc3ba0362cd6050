import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { caseDraft, askCompiler } from '../pipeline/compile/case-compiler.js';
import { readGoalsFile } from '../pipeline/compose/goals-file.js';
import { EnvironmentShapes } from '../pipeline/environment-shapes.js';
import { openAIJsonModel } from '../pipeline/llm/json-model.js';
import { fitsStrictMode, responseJsonSchema } from '../provider/response-format.js';
import { builtinEnvironments } from '../sandbox/environments/index.js';
import { startScriptedModelServer, type StartedModelServer } from '../testing/index.js';
import { goodEmailDraft } from './helpers/pipeline-drafts.js';
import { jsonStep, modelFor, PIPELINE_FIXTURES } from './helpers/pipeline-fixtures.js';
import { join } from 'node:path';

/**
 * Structured outputs: every pipeline request asks for `response_format: json_schema` with the
 * JSON Schema generated from the zod schema its reply is validated with — the predicate language
 * included — and states the same schema in the system prompt; an endpoint that refuses
 * `json_schema` is asked with `json_object` from then on.
 */
describe('the case compiler asks for its reply with the JSON Schema of the case draft', () => {
  let server: StartedModelServer;
  beforeAll(async () => {
    server = await startScriptedModelServer({ script: [jsonStep(goodEmailDraft())] });
    const goal = (await readGoalsFile(join(PIPELINE_FIXTURES, 'goals/compile-goals.yaml'))).goals[0]!;
    const reply = await askCompiler(modelFor(server), { goal, environments: [await new EnvironmentShapes(builtinEnvironments).describe('email')] });
    expect(reply.ok).toBe(true);
  });
  afterAll(() => server.close());

  it('sends response_format json_schema with the generated schema, and the schema in the system prompt', () => {
    const body = server.requests[0]!.body as { response_format: unknown; messages: Array<{ role: string; content: string }> };
    const schema = responseJsonSchema(caseDraft);
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'case_draft', schema, strict: false } });
    expect(body.messages[0]!.content).toContain(JSON.stringify(schema));
  });

  it('the schema carries the predicate language itself: kinds, state scopes, egress fields, injection rules', () => {
    const schema = responseJsonSchema(caseDraft) as {
      $defs: Record<string, { properties?: Record<string, { enum?: string[] }>; anyOf?: Array<{ required?: string[] }> }>;
    };
    const kinds = schema.$defs.Predicate!.anyOf!.map((alternative) => alternative.required?.[0]);
    expect(kinds).toEqual(['all', 'any', 'not', 'toolCall', 'sequence', 'state', 'response', 'egress', 'custom']);
    expect(schema.$defs.StateMatcher!.properties!.scope!.enum).toEqual(['final', 'initial', 'added', 'removed', 'changed']);
    expect(Object.keys(schema.$defs.EgressMatcher!.properties!)).toEqual(['secret', 'contains', 'ignoreCase', 'channel', 'destination', 'encodings']);
    expect(JSON.stringify(schema)).toContain('"mode":{"type":"string","enum":["identity","append","prefix","override"]}');
  });
});

describe('strict mode only where the endpoint can enforce the schema', () => {
  it('a closed, fully required schema is strict; an optional field, a record or minLength is not', () => {
    expect(fitsStrictMode(responseJsonSchema(z.strictObject({ a: z.string(), b: z.array(z.enum(['x', 'y'])) })))).toBe(true);
    expect(fitsStrictMode(responseJsonSchema(z.strictObject({ a: z.string().optional() })))).toBe(false);
    expect(fitsStrictMode(responseJsonSchema(z.strictObject({ a: z.record(z.string(), z.string()) })))).toBe(false);
    expect(fitsStrictMode(responseJsonSchema(z.strictObject({ a: z.string().min(3) })))).toBe(false);
  });
});

describe('an endpoint without json_schema support', () => {
  let server: Server;
  let url: string;
  const formats: string[] = [];
  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const request = JSON.parse(body) as { response_format: { type: string }; stream?: boolean };
      const format = request.response_format.type;
      formats.push(format);
      res.setHeader('content-type', 'application/json');
      if (format === 'json_schema') {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", type: 'invalid_request_error' },
          }),
        );
        return;
      }
      if (request.stream) {
        // Replies stream (the pipeline's requests do): one content chunk, then the end.
        res.setHeader('content-type', 'text/event-stream');
        const chunk = {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'm',
          choices: [{ index: 0, delta: { content: '{"queries": ["tool poisoning"]}' } }],
        };
        res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
        return;
      }
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '{"queries": ["tool poisoning"]}' } }],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is asked again with json_object, and only with json_object from then on', async () => {
    const model = openAIJsonModel({ model: 'm', baseURL: url, apiKey: 'k', maxRetries: 0 });
    const schema = z.object({ queries: z.array(z.string()) });
    expect(await model.ask({ system: 's', user: 'u', schema, name: 'frontier' })).toMatchObject({ ok: true, value: { queries: ['tool poisoning'] } });
    expect(await model.ask({ system: 's', user: 'u', schema, name: 'frontier' })).toMatchObject({ ok: true });
    expect(formats).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(model.responseFormat).toBe('json_object');
  });
});
