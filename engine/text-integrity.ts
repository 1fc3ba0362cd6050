import { isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';

/**
 * What a real agent reads must be what the author wrote. Two ways it silently was not:
 *
 *  - YAML ends a plain (unquoted) scalar at ` #`: `task: Pull request #8 in kestrel/ledger adds …`
 *    is the task "Pull request", the rest a comment. Every gate passed such cases, because the
 *    scripted model reads no English. In the fields an agent (or the user simulator) reads, a
 *    plain scalar followed by a comment on its own line is an error.
 *  - Composed text with a splice in it: a clause joined to a lower-case fragment
 *    (`… debrief. the campaign target is …`), a sentence with nothing in it (`done. .`), text that
 *    starts with dangling punctuation.
 */

/** Where a problem is: the field's path in the document and the offset the message points at. */
export interface TextProblem {
  path: PropertyKey[];
  offset: number;
  message: string;
}

/** Which top-level fields of a case hold what the agent, its user or its tools' results say. */
export const CASE_TEXT_FIELDS: ReadonlySet<string> = new Set(['title', 'goal', 'task', 'user', 'attack', 'init']);

/**
 * Every plain scalar under `fields` (top-level keys) that a same-line comment cut short, with the
 * text YAML read and the text the line holds.
 */
export function commentCutTexts(root: unknown, source: string, fields: ReadonlySet<string>): TextProblem[] {
  const problems: TextProblem[] = [];
  const visit = (node: unknown, path: PropertyKey[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof key !== 'string' && typeof key !== 'number') continue;
        if (path.length === 0 && !fields.has(String(key))) continue;
        visit(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item, [...path, i]));
    } else if (isScalar(node) && node.type === 'PLAIN' && typeof node.value === 'string' && node.range) {
      const end = node.range[1];
      const lineEnd = source.indexOf('\n', end);
      const rest = source.slice(end, lineEnd < 0 ? undefined : lineEnd);
      const hash = rest.search(/^\s+#/);
      if (hash < 0) return;
      const whole = source.slice(node.range[0], lineEnd < 0 ? undefined : lineEnd).trim();
      problems.push({
        path,
        offset: end + rest.indexOf('#'),
        message: `YAML ends this text at '#': it reads ${JSON.stringify(node.value)}, not ${JSON.stringify(whole)} — quote it`,
      });
    }
  };
  visit((root as { contents?: YamlNode } | null)?.contents ?? root, []);
  return problems;
}

/** Words that begin a sentence, not an identifier: after a full stop they are a splice when lower-case. */
const SENTENCE_WORDS =
  "the|a|an|we|you|i|it|its|that|this|these|those|our|your|their|they|he|she|there|please|and|but|so|then|if|when|because|after|before|also|do|don't|make|send|forward|delete|add|move";
/** Abbreviations whose full stop ends no sentence. */
const ABBREVIATIONS = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|approx|incl|no|nr|fig|cf|a\.m|p\.m|st|dr|mr|mrs|ms|inc|ltd|co|dept|ref)\.$/i;

/** Why a composed text reads as spliced, or undefined when it reads as written. */
export function splicedText(text: string): string | undefined {
  const dangling = /(?:^|\n)[ \t]*([.,;:])[ \t]+\S/.exec(text);
  if (dangling) return `a line starts with a dangling "${dangling[1]}": ${JSON.stringify(excerpt(text, dangling.index))}`;
  const empty = /[.!?][ \t]+[.!?](?![.!?])/.exec(text);
  if (empty && !/\.\.\.$/.test(text.slice(0, empty.index + 1))) return `an empty sentence: ${JSON.stringify(excerpt(text, empty.index))}`;
  const lowerStart = new RegExp(`([^\\s]*)[.!?][ \\t]+(${SENTENCE_WORDS})\\b`, 'g');
  for (const m of text.matchAll(lowerStart)) {
    const before = text.slice(0, m.index + m[1]!.length + 1);
    if (ABBREVIATIONS.test(before) || /\d\.$/.test(before) || /\.\w+\.$/.test(before) || /[/@]/.test(m[1]!)) continue;
    return `a sentence starts in lower case after a full stop ("${m[2]}"), as a spliced fragment does: ${JSON.stringify(excerpt(text, m.index!))}`;
  }
  return undefined;
}

function excerpt(text: string, at: number): string {
  const start = Math.max(0, at - 30);
  return `${start > 0 ? '…' : ''}${text.slice(start, at + 40).replace(/\s+/g, ' ')}${at + 40 < text.length ? '…' : ''}`;
}

/** The texts of a case composed as one voice — the task, the adversarial messages, the payloads, the poisoned descriptions — that read as spliced. */
export function splicedTexts(spec: {
  task: string;
  attack: { messages?: readonly string[] | undefined; injections: ReadonlyArray<{ payload: string }>; toolDescriptions: ReadonlyArray<{ payload: string }> };
}): Array<{ path: PropertyKey[]; message: string }> {
  const composed: Array<[PropertyKey[], string]> = [
    [['task'], spec.task],
    ...(spec.attack.messages ?? []).map((m, i): [PropertyKey[], string] => [['attack', 'messages', i], m]),
    ...spec.attack.injections.map((r, i): [PropertyKey[], string] => [['attack', 'injections', i, 'payload'], r.payload]),
    ...spec.attack.toolDescriptions.map((r, i): [PropertyKey[], string] => [['attack', 'toolDescriptions', i, 'payload'], r.payload]),
  ];
  const out: Array<{ path: PropertyKey[]; message: string }> = [];
  for (const [path, text] of composed) {
    const why = splicedText(text);
    if (why) out.push({ path, message: `this text reads as spliced: ${why}` });
  }
  return out;
}
