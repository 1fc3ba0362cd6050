import { z } from 'zod';

/**
 * The JSON Schema of a model reply — a pipeline stage's or a control agent's — generated from the
 * zod schema the reply is validated with, never written by hand, so the contract the model is
 * shown and the one it is held to are the same object. The predicate language, the case draft
 * and the goal all come from the project's own schemas (engine/case-schema.ts,
 * engine/predicate-schema.ts). Sent as `response_format: json_schema` (`responseFormatFor`) and
 * stated in the system prompt (`schemaInstruction`).
 */

export type JsonSchema = Record<string, unknown>;

const cache = new WeakMap<z.ZodType, JsonSchema>();

export function responseJsonSchema(schema: z.ZodType): JsonSchema {
  let json = cache.get(schema);
  if (!json) {
    // The input side: what the model writes (defaults may be left out), refinements aside.
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    json = rest;
    cache.set(schema, json);
  }
  return json;
}

/**
 * Keywords OpenAI's strict structured outputs accept. A schema outside this subset (an optional
 * property, a free-form record, `minLength`) is sent with `strict: false`: the endpoint is guided
 * by it, and zod still validates the reply.
 */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** Whether the endpoint can enforce the schema as given (every object closed and fully required, known keywords only). */
export function fitsStrictMode(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(fitsStrictMode);
  if (typeof schema !== 'object' || schema === null) return true;
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!STRICT_KEYWORDS.has(key)) return false;
  if (node.type === 'object' || node.properties !== undefined) {
    if (node.additionalProperties !== false) return false;
    const properties = Object.keys((node.properties as Record<string, unknown>) ?? {});
    const required = new Set((node.required as string[] | undefined) ?? []);
    if (properties.some((p) => !required.has(p))) return false;
  }
  for (const key of ['properties', '$defs'] as const) {
    const children = node[key];
    if (children && typeof children === 'object' && !Object.values(children).every(fitsStrictMode)) return false;
  }
  for (const key of ['items', 'anyOf', 'additionalProperties'] as const) {
    const child = node[key];
    if (child !== undefined && typeof child !== 'boolean' && !fitsStrictMode(child)) return false;
  }
  return true;
}

/** The reply contract as the prompt states it: the schema, named, in a fenced block. */
export function schemaInstruction(name: string, schema: JsonSchema): string {
  return [`Reply with one JSON object, nothing else, that validates against this JSON Schema ("${name}"):`, '```json', JSON.stringify(schema), '```'].join(
    '\n',
  );
}

/** `response_format` for a Chat Completions request: the schema, strict when the endpoint can enforce it. */
export function responseFormatFor(name: string, schema: z.ZodType) {
  const json = responseJsonSchema(schema);
  return { type: 'json_schema' as const, json_schema: { name, schema: json, strict: fitsStrictMode(json) } };
}

/** A 400 whose message names the structured-output request: the endpoint only takes `json_object`. */
export function rejectsJsonSchema(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return status === 400 && /json_schema|response_format|structured/i.test((error as Error).message);
}
