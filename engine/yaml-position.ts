import { isMap, isSeq, type Node as YamlNode } from 'yaml';

/**
 * Where a field of a parsed YAML document is: the position every "file:line field: problem"
 * message names (case files, taxonomy and pipeline files alike).
 */
/** The deepest YAML node on `path` that exists: a missing field points at its parent mapping. */
export function locatePath(
  root: YamlNode | null | undefined | unknown,
  path: ReadonlyArray<PropertyKey>,
  at: (offset: number) => { line: number; col: number },
): { line: number; column: number } {
  let node: unknown = root;
  let best: { line: number; column: number } = { line: 1, column: 1 };
  const mark = (n: unknown) => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    if (range) {
      const p = at(range[0]);
      best = { line: p.line, column: p.col };
    }
  };
  mark(node);
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (item.key as { value?: unknown } | null)?.value === part);
      if (!pair) break;
      // Point at the key: "verifier:" is where a reader looks for the verifier.
      mark(pair.key);
      node = pair.value;
      if (node && typeof part === 'string') {
        const valueRange = (node as { range?: [number, number, number] }).range;
        if (valueRange && !isMap(node) && !isSeq(node)) mark(node);
      }
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part];
      if (!item) break;
      mark(item);
      node = item;
    } else break;
  }
  return best;
}
