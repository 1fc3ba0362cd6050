import { isPlainObject } from '../../engine/json.js';
import type { GrammarSchema } from './json-grammar.js';

/**
 * A GBNF grammar (llama.cpp's) for a schema of the subset `grammarSchema` writes. Written here
 * rather than by node-llama-cpp's JSON-schema grammar because that one writes every property of
 * an object — an optional argument the task never needs then has to be invented (`"limit": 1`
 * listed one mail of two, and the benign task failed). Here a required key is written, an optional
 * one may be (in the schema's order), and nothing else is. The JSON is compact: no newlines, at
 * most one space after `:` and `,`.
 */
export function gbnfFor(schema: GrammarSchema): string {
  return new GbnfWriter(schema).write();
}

const PRIMITIVES: Record<string, string> = {
  ws: '" "?',
  char: '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
  string: '"\\"" char* "\\""',
  integer: '"-"? ("0" | [1-9] [0-9]{0,15})',
  number: '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,4})?',
  boolean: '"true" | "false"',
  null: '"null"',
};

class GbnfWriter {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();
  private count = 0;
  private readonly defs: Record<string, unknown>;

  constructor(private readonly schema: GrammarSchema) {
    this.defs = isPlainObject(schema.$defs) ? schema.$defs : {};
  }

  write(): string {
    for (const [name, body] of Object.entries(PRIMITIVES)) this.rules.set(name, body);
    for (const name of Object.keys(this.defs)) this.rules.set(defRule(name), '');
    for (const [name, def] of Object.entries(this.defs)) this.rules.set(defRule(name), this.body(def));
    const root = this.body(this.schema);
    return [`root ::= ${root}`, ...[...this.rules].map(([name, body]) => `${name} ::= ${body}`)].join('\n');
  }

  /** A rule for `body`, shared when the same body comes up again. */
  private rule(body: string): string {
    const known = this.byBody.get(body);
    if (known) return known;
    const name = `r${++this.count}`;
    this.rules.set(name, body);
    this.byBody.set(body, name);
    return name;
  }

  private body(schema: unknown): string {
    if (!isPlainObject(schema)) return 'string | number | boolean | null';
    if (typeof schema.$ref === 'string') return defRule(schema.$ref.replace(/^#\/\$defs\//, ''));
    if ('const' in schema) return literal(schema.const);
    if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
    if (Array.isArray(schema.oneOf)) return schema.oneOf.map((s) => this.rule(this.body(s))).join(' | ');
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length !== 1) return types.map((t) => this.rule(this.body({ ...schema, type: t }))).join(' | ');
    switch (types[0]) {
      case 'object':
        return this.object(schema);
      case 'array':
        return this.array(schema);
      case 'string':
        return this.string(schema);
      case 'integer':
      case 'number':
      case 'boolean':
      case 'null':
        return types[0];
      default:
        return 'string | number | boolean | null';
    }
  }

  private string(schema: Record<string, unknown>): string {
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
    if (min === 0 && max === undefined) return 'string';
    return `"\\"" char{${min},${max ?? ''}} "\\""`;
  }

  private array(schema: Record<string, unknown>): string {
    const item = this.rule(this.body(schema.items));
    const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const max = typeof schema.maxItems === 'number' ? schema.maxItems : undefined;
    if (max === 0) return '"[" "]"';
    const rest = `("," ws ${item}){${Math.max(min - 1, 0)},${max === undefined ? '' : max - 1}}`;
    return min === 0 ? `"[" (${item} ${rest})? "]"` : `"[" ${item} ${rest} "]"`;
  }

  private object(schema: Record<string, unknown>): string {
    const properties = isPlainObject(schema.properties) ? Object.entries(schema.properties) : [];
    if (properties.length === 0) {
      if (schema.additionalProperties === false) return '"{" "}"';
      const value = this.rule(isPlainObject(schema.additionalProperties) ? this.body(schema.additionalProperties) : 'string | number | boolean | null');
      const pair = this.rule(`string ":" ws ${value}`);
      const max = typeof schema.maxProperties === 'number' ? schema.maxProperties : undefined;
      return `"{" (${pair} ("," ws ${pair}){0,${max === undefined ? '' : max - 1}})? "}"`;
    }
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const pair = (key: string, value: unknown) => this.rule(`${literal(key)} ":" ws ${this.rule(this.body(value))}`);
    const must = properties.filter(([k]) => required.has(k)).map(([k, v]) => pair(k, v));
    const may = properties.filter(([k]) => !required.has(k)).map(([k, v]) => pair(k, v));
    if (must.length > 0) return `"{" ${must.join(' "," ws ')}${may.map((p) => ` ("," ws ${p})?`).join('')} "}"`;
    // No key required: any of the optional ones, in order — a chain where each link may be skipped.
    let chain = may[may.length - 1]!;
    for (let i = may.length - 2; i >= 0; i--) chain = this.rule(`${may[i]} ("," ws ${chain})? | ${chain}`);
    return `"{" (${chain})? "}"`;
  }
}

function defRule(name: string): string {
  return `def-${name.replace(/[^A-Za-z0-9]/g, '-').toLowerCase()}`;
}

/** A JSON value as a GBNF string literal. */
function literal(value: unknown): string {
  return JSON.stringify(JSON.stringify(value));
}
