import { isPlainObject } from './json.js';

/**
 * Normalisers make two spellings of one value compare equal: an IBAN with or without spaces, a
 * phone number with dashes. They apply to both sides of a comparison (the value and the operand),
 * to strings only, at any depth of an object or array (values, never keys).
 */
export const normalizers = ['lower', 'nospace', 'digits', 'iban', 'phone'] as const;
export type Normalizer = (typeof normalizers)[number];

const rules: Record<Normalizer, (text: string) => string> = {
  lower: (text) => text.toLowerCase(),
  nospace: (text) => text.replace(/\s+/g, ''),
  digits: (text) => text.replace(/\D+/g, ''),
  iban: (text) => text.replace(/\s+/g, '').toUpperCase(),
  // "+44 20 7946-0018" → "+442079460018": the leading + says "international", so it stays.
  phone: (text) => `${text.trim().startsWith('+') ? '+' : ''}${text.replace(/\D+/g, '')}`,
};

/** The normalisers a matcher asks for, in order; `ignoreCase` is `lower` applied last. */
export function normalizersOf(
  m: { normalize?: Normalizer | Normalizer[] | undefined; ignoreCase?: boolean | undefined },
  inherited: readonly Normalizer[] = [],
): Normalizer[] {
  const own = m.normalize === undefined ? [] : Array.isArray(m.normalize) ? m.normalize : [m.normalize];
  const list = [...inherited];
  for (const n of [...own, ...(m.ignoreCase ? (['lower'] as const) : [])]) if (!list.includes(n)) list.push(n);
  return list;
}

export function normalizeText(text: string, list: readonly Normalizer[]): string {
  let out = text;
  for (const n of list) out = rules[n](out);
  return out;
}

/** Every string inside `value` normalised; numbers, booleans, null and keys are left as they are. */
export function normalizeDeep(value: unknown, list: readonly Normalizer[]): unknown {
  if (list.length === 0) return value;
  if (typeof value === 'string') return normalizeText(value, list);
  if (Array.isArray(value)) return value.map((v) => normalizeDeep(v, list));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeDeep(v, list)]));
  return value;
}

/** ` (normalised: iban, lower)` for evidence; empty when nothing is normalised. */
export function describeNormalizers(list: readonly Normalizer[]): string {
  return list.length === 0 ? '' : ` (normalised: ${list.join(', ')})`;
}
