import { isPlainObject } from './json.js';

/**
 * Normalisers make two spellings of one value compare equal: an IBAN with or without spaces, a
 * phone number with dashes. They apply to both sides of a comparison (the value and the operand),
 * to strings only, at any depth of an object or array (values, never keys).
 */
export const normalizers = ['lower', 'nospace', 'digits', 'iban', 'phone'] as const;
export type Normalizer = (typeof normalizers)[number];

/**
 * What every normaliser does first: one spelling per character (NFKC: "e" + U+0301 is "é",
 * fullwidth "１" is "1", the "ﬁ" ligature is "fi") and no invisible characters (zero-width spaces
 * and joiners, U+2060, U+FEFF, soft hyphens — every default-ignorable code point). An injection
 * that tells the agent to write a value that way must not slip past the check.
 */
function canonical(text: string): string {
  return text.normalize('NFKC').replace(/\p{Default_Ignorable_Code_Point}/gu, '');
}

/**
 * Full case folding, as far as JavaScript has it: upper-casing first turns "ß" into "SS" and "ǰ"
 * into "J̌", so "Straße" and "STRASSE" fold alike; then lower-case (final sigma to sigma).
 */
function fold(text: string): string {
  return text.toUpperCase().toLowerCase().replace(/ς/g, 'σ').normalize('NFKC');
}

/** Every Unicode decimal digit (`\p{Nd}`: Arabic-Indic, Devanagari, fullwidth, …) as its ASCII digit; nothing else kept. */
function asciiDigits(text: string): string {
  let out = '';
  for (const ch of text) {
    if (ch >= '0' && ch <= '9') out += ch;
    else if (/\p{Nd}/u.test(ch)) out += String(digitValue(ch.codePointAt(0)!));
  }
  return out;
}

/** Decimal digits come in runs of ten from zero (Unicode guarantees it); runs may abut, so count back. */
function digitValue(codePoint: number): number {
  let k = 0;
  while (k < 10_000 && /\p{Nd}/u.test(String.fromCodePoint(codePoint - k - 1))) k++;
  return k % 10;
}

const rules: Record<Normalizer, (text: string) => string> = {
  lower: (text) => fold(canonical(text)),
  nospace: (text) => canonical(text).replace(/\s+/g, ''),
  digits: (text) => asciiDigits(canonical(text)),
  iban: (text) =>
    canonical(text)
      .replace(/[\s-]+/g, '')
      .toUpperCase(),
  // "+44 20 7946-0018" → "+442079460018": the leading + says "international", so it stays.
  phone: (text) => {
    const t = canonical(text);
    return `${t.trim().startsWith('+') ? '+' : ''}${asciiDigits(t)}`;
  },
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
