import { isPlainObject } from '../engine/json.js';
import { explainMissing, parsePath, resolvePath } from '../engine/paths.js';
import type { Predicate } from '../engine/predicate-schema.js';
import { closest } from '../engine/suggest.js';

/**
 * A state check whose path names nothing — in the initial sandbox nor after any witness — is a
 * typo more often than not (`email.trsut`), and was reported only as "0 of 0 items matched".
 * Checked when the case loads: a path that stops at an environment or at one of its top-level
 * fields (fixed by the environment's state), or one whose missing key is one edit from a key that
 * is there, is an error naming where it stops and what is there. A deeper key that may yet be
 * created (a new file, a new record's id) by a route no witness takes is left alone.
 */
export interface VerifierPathProblem {
  path: PropertyKey[];
  message: string;
}

function statePaths(p: Predicate, at: PropertyKey[], out: Array<{ path: string; at: PropertyKey[] }>): void {
  if ('all' in p) p.all.forEach((c, i) => statePaths(c, [...at, 'all', i], out));
  else if ('any' in p) p.any.forEach((c, i) => statePaths(c, [...at, 'any', i], out));
  else if ('not' in p) statePaths(p.not, [...at, 'not'], out);
  else if ('state' in p) {
    out.push({ path: p.state.path, at: [...at, 'state', 'path'] });
    const set = p.state.set;
    if (set) {
      for (const relation of ['sameAs', 'subsetOf', 'supersetOf', 'disjointFrom'] as const) {
        const side = set[relation];
        if (side && isPlainObject(side) && typeof side.path === 'string') out.push({ path: side.path, at: [...at, 'state', 'set', relation, 'path'] });
      }
    }
  }
}

export function verifierPathProblems(predicate: Predicate, at: PropertyKey[], snapshots: readonly unknown[]): VerifierPathProblem[] {
  const found: Array<{ path: string; at: PropertyKey[] }> = [];
  statePaths(predicate, at, found);
  const problems: VerifierPathProblem[] = [];
  for (const { path, at: where } of found) {
    if (snapshots.some((s) => resolvePath(s, path).length > 0)) continue;
    const explained = snapshots.map((s) => explainMissing(s, path)).find((e) => e !== undefined);
    if (!explained) continue;
    const depth = parsePath(path).findIndex((seg) => seg.kind === 'key' && seg.key === explained.missing);
    const near = closest(explained.missing, explained.known);
    if (depth > 1 && near === undefined) continue;
    problems.push({
      path: where,
      message: `the path ${JSON.stringify(path)} names nothing in the initial state or after any witness: ${explained.message}${near ? `; did you mean "${near}"?` : ''}`,
    });
  }
  return problems;
}
