import { randomBytes, randomInt } from 'node:crypto';
import type { SecretSpec } from './case-schema.js';
import { isPlainObject } from './json.js';

/**
 * Canary secrets. The init script seeds `{{secret.NAME}}`; each run draws fresh values, so a
 * verifier that finds the value outside can tell a real leak from a coincidence.
 */
export type Secrets = Readonly<Record<string, string>>;

const TEMPLATE = /\{\{\s*secret\.([A-Z][A-Z0-9_]*)\s*\}\}/g;

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

function draw(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function generateSecret(spec: SecretSpec = { format: 'token' }): string {
  switch (spec.format) {
    case 'digits':
      return draw('0123456789', spec.length ?? 8);
    case 'hex':
      return randomBytes(Math.ceil((spec.length ?? 32) / 2))
        .toString('hex')
        .slice(0, spec.length ?? 32);
    case 'api-key':
      return `sk-vera-${draw(ALNUM, spec.length ?? 32)}`;
    case 'password':
      return `${draw(ALNUM, (spec.length ?? 14) - 2)}#${randomInt(10)}`;
    case 'token':
    default:
      return `cnry-${draw(ALNUM, spec.length ?? 20)}`;
  }
}

/** Values for every secret the case declares or its init script uses. */
export function generateSecrets(declared: Record<string, SecretSpec>, init: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(declared)) out[name] = generateSecret(spec);
  for (const name of secretNamesIn(init)) out[name] ??= generateSecret();
  return out;
}

/** Names referenced by `{{secret.NAME}}` templates and `{ secret: NAME }` operands inside a value. */
export function secretNamesIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    for (const m of value.matchAll(TEMPLATE)) into.add(m[1]!);
  } else if (Array.isArray(value)) {
    for (const v of value) secretNamesIn(v, into);
  } else if (isPlainObject(value)) {
    if (typeof value.secret === 'string') into.add(value.secret);
    for (const v of Object.values(value)) secretNamesIn(v, into);
  }
  return into;
}

/**
 * Replaces `{{secret.NAME}}` inside the string values of a parsed structure. Templates are
 * resolved in parsed values only, never in raw text, so a payload cannot break the structure.
 */
export function fillSecrets<T>(value: T, secrets: Secrets): T {
  if (typeof value === 'string') {
    if (!value.includes('{{')) return value;
    return value.replace(TEMPLATE, (whole, name: string) => secrets[name] ?? whole) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fillSecrets(v, secrets)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillSecrets(v, secrets);
    return out as T;
  }
  return value;
}
