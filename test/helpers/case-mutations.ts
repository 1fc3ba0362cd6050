/**
 * Mutations of case files, as slips and attacks make them: the fuzz corpus of test/case-fuzz.test.ts
 * and the reliability suite's mutants. Deterministic with a seeded PRNG.
 */

/** A small seeded PRNG (mulberry32): the corpus is the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const laughs = () => {
  const lines = ['lol0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++)
    lines.push(
      `lol${i}: &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  return lines.join('\n');
};
export const deepBlock = (n: number) => Array.from({ length: n }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n') + `\n${'  '.repeat(n + 1)}v: 1`;

export type Mutation = (source: string, random: () => number) => string;

const pick = <T>(items: T[], random: () => number): T => items[Math.floor(random() * items.length)]!;
const lineIndex = (lines: string[], random: () => number) => Math.floor(random() * lines.length);

export const MUTATIONS: Record<string, Mutation> = {
  'delete a line': (s, r) => {
    const lines = s.split('\n');
    lines.splice(lineIndex(lines, r), 1);
    return lines.join('\n');
  },
  'rename a key': (s, r) => {
    const lines = s.split('\n');
    const i = lineIndex(lines, r);
    lines[i] = lines[i]!.replace(/^(\s*(?:- )?)([a-zA-Z]+):/, (_m, pre: string, key: string) => `${pre}${key}x:`);
    return lines.join('\n');
  },
  'wrong type for a value': (s, r) => {
    const lines = s.split('\n');
    const i = lineIndex(lines, r);
    lines[i] = lines[i]!.replace(/:\s+(.+)$/, pick([': 42', ': [1, 2]', ': {a: 1}', ': null', ': true', ': ""'], r));
    return lines.join('\n');
  },
  'truncate the file': (s, r) => s.slice(0, Math.floor(r() * s.length)),
  'break the indentation': (s, r) => {
    const lines = s.split('\n');
    const i = lineIndex(lines, r);
    lines[i] = `${' '.repeat(1 + Math.floor(r() * 5))}${lines[i]}`;
    return lines.join('\n');
  },
  'a tab in the indentation': (s, r) => {
    const lines = s.split('\n');
    const i = lineIndex(lines, r);
    lines[i] = `\t${lines[i]}`;
    return lines.join('\n');
  },
  'duplicate a key': (s) => `${s}\nid: duplicate-id\n`,
  'an alias bomb': (s) => `${laughs()}\n${s}`,
  'deep block nesting': (s, r) => `${s}\nextra:\n${deepBlock(500 + Math.floor(r() * 2500))}\n`,
  'deep flow nesting': (s, r) => {
    const n = 200 + Math.floor(r() * 5000);
    return `${s}\nextra: ${'['.repeat(n)}${']'.repeat(n)}\n`;
  },
  'a huge string': (s, r) => s.replace(/^title: .*$/m, `title: "${'x'.repeat(100_000 + Math.floor(r() * 2_000_000))}"`),
  'NUL bytes': (s, r) => {
    const at = Math.floor(r() * s.length);
    return `${s.slice(0, at)}\u0000\u0000${s.slice(at)}`;
  },
  'invalid UTF-8': (s, r) => {
    const at = Math.floor(r() * s.length);
    const bytes = Buffer.concat([Buffer.from(s.slice(0, at)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(s.slice(at))]);
    return bytes.toString('utf8');
  },
  // Catastrophic for a backtracking engine, linear on RE2: it loads, and cannot freeze a run (below).
  'a super-linear regular expression': (s) => s.replace(/^verifier:[\s\S]*?(?=^\w)/m, 'verifier: { response: { matches: "(a+)+$" } }\n'),
  'an invalid regular expression': (s, r) =>
    `${s.replace(/^verifier:[\s\S]*?(?=^\w)/m, `verifier: { response: { matches: "${pick(['[', '(?=x)y', '(a)\\\\1', '*', '(?<n>a'], r)}" } }\n`)}`,
  'an unknown init operation': (s) => s.replace(/op: (\w+)\.(\w+)/, 'op: $1.explode'),
  'an unknown environment': (s) => s.replace(/op: (\w+)\./, 'op: nowhere.'),
  'a non-mapping document': (_s, r) => pick(['- a\n- b\n', '42\n', '"just a string"\n', '---\n---\n', '', '{', ']]]'], r),
  'several documents': (s) => `${s}\n---\n${s}`,
  'random bytes spliced in': (s, r) => {
    const at = Math.floor(r() * s.length);
    const junk = Array.from({ length: 1 + Math.floor(r() * 20) }, () => String.fromCharCode(Math.floor(r() * 0x7f))).join('');
    return `${s.slice(0, at)}${junk}${s.slice(at)}`;
  },
};
