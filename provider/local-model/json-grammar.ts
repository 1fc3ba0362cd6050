import { isPlainObject } from '../../engine/json.js';

/**
 * A JSON Schema — a tool's input schema, a `response_format` — as the subset the GBNF writer
 * (gbnf.ts) takes: types, `const`, `enum`, `oneOf`, objects with properties, required keys and
 * `additionalProperties`, arrays with items and bounds, strings with lengths, `$ref` into `$defs`. What it cannot express is dropped, never guessed:
 * `anyOf` becomes `oneOf`; numeric bounds, patterns, defaults and descriptions of constraints go;
 * a schema that says nothing (`{}`) becomes "any JSON scalar". The model's output then parses as
 * JSON of that shape; the caller still validates it against the real schema.
 */
export type GrammarSchema = Record<string, unknown>;

const ANY_SCALAR: GrammarSchema = { type: ['string', 'number', 'boolean', 'null'] };
const MAX_FREE_KEYS = 16;
const MAX_ITEMS = 64;
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

export function grammarSchema(schema: unknown, depth = 0): GrammarSchema {
  if (!isPlainObject(schema) || depth > 12) return ANY_SCALAR;
  const out: GrammarSchema = {};
  if (schema.$defs && isPlainObject(schema.$defs)) {
    out.$defs = Object.fromEntries(Object.entries(schema.$defs).map(([k, v]) => [k, grammarSchema(v, depth + 1)]));
  }
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/$defs/')) return { ...out, $ref: schema.$ref };
  if ('const' in schema && isScalar(schema.const)) return { ...out, const: schema.const };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(isScalar);
    if (values.length > 0) return { ...out, enum: values };
  }
  const alternatives = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (alternatives && alternatives.length > 0) return { ...out, oneOf: alternatives.map((a) => grammarSchema(a, depth + 1)) };
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t): t is string => typeof t === 'string' && TYPES.has(t));
  if (types.length === 0) {
    if (isPlainObject(schema.properties)) types.push('object');
    else if (schema.items !== undefined) types.push('array');
    else return { ...out, ...ANY_SCALAR };
  }
  if (types.length > 1) {
    // A union of types: the structured ones as their own alternatives.
    const scalars = types.filter((t) => t !== 'object' && t !== 'array');
    const structured = types.filter((t) => t === 'object' || t === 'array').map((t) => grammarSchema({ ...schema, type: t }, depth + 1));
    if (structured.length === 0) return { ...out, type: scalars };
    return { ...out, oneOf: [...(scalars.length ? [{ type: scalars }] : []), ...structured] };
  }
  const type = types[0]!;
  if (type === 'object') {
    const properties = isPlainObject(schema.properties)
      ? Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, grammarSchema(v, depth + 1)]))
      : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string' && k in properties) : [];
    const result: GrammarSchema = { ...out, type: 'object', properties, required };
    if (Object.keys(properties).length === 0) {
      result.additionalProperties =
        schema.additionalProperties === false
          ? false
          : isPlainObject(schema.additionalProperties)
            ? grammarSchema(schema.additionalProperties, depth + 1)
            : ANY_SCALAR;
      // A free-form object is where a small model loops (`"domains": 1` forty times, till its token
      // limit): the grammar bounds how many keys it may write.
      if (result.additionalProperties !== false)
        result.maxProperties = typeof schema.maxProperties === 'number' ? Math.min(schema.maxProperties, MAX_FREE_KEYS) : MAX_FREE_KEYS;
    } else if (isPlainObject(schema.additionalProperties)) result.additionalProperties = grammarSchema(schema.additionalProperties, depth + 1);
    else result.additionalProperties = false;
    return result;
  }
  if (type === 'array') {
    const result: GrammarSchema = { ...out, type: 'array', items: grammarSchema(schema.items ?? {}, depth + 1) };
    if (typeof schema.minItems === 'number') result.minItems = schema.minItems;
    // The same for lists: a bound the schema does not give is MAX_ITEMS.
    result.maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : MAX_ITEMS;
    return result;
  }
  if (type === 'string') {
    const result: GrammarSchema = { ...out, type: 'string' };
    if (typeof schema.minLength === 'number') result.minLength = schema.minLength;
    if (typeof schema.maxLength === 'number') result.maxLength = schema.maxLength;
    if (schema.format === 'date-time' || schema.format === 'date' || schema.format === 'time') result.format = schema.format;
    return result;
  }
  return { ...out, type };
}

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
