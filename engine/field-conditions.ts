import type { OperandScope } from './operands.js';
import { formatSegments, parsePath, resolveSegments, selectsMany, type PathSegment } from './paths.js';
import type { Condition, FieldConditions } from './predicate-schema.js';
import { matchValue } from './value-matcher.js';

/**
 * Conditions on fields of one object (a `where`, a tool call's `args`, an injection's `when`),
 * keyed by paths relative to it.
 *
 * Conditions whose paths share a prefix up to a `*` or `[field=value]` segment are checked on the
 * same element: `{ "collaborators.*.user": mark, "collaborators.*.permission": admin }` holds only
 * when one collaborator is mark *and* admin — not when bob is admin and mark is a reader. A
 * condition alone on such a path holds when one of the places it names satisfies it; a path that
 * names nothing is matched as a missing value.
 */
export interface FieldsOutcome {
  ok: boolean;
  /** The conditions that failed (or, when all held, why each held), joined for evidence. */
  why: string;
  /** Conditions that held, out of `total`: how close an item came (near-miss evidence). */
  held: number;
  total: number;
  passed: string[];
  failed: string[];
}

interface Leaf {
  segments: readonly PathSegment[];
  condition: Condition;
}

type Part = { kind: 'leaf'; leaf: Leaf } | { kind: 'group'; prefix: readonly PathSegment[]; rest: Leaf[] };

export function matchFields(conditions: FieldConditions, target: unknown, scope: OperandScope): FieldsOutcome {
  const leaves = Object.entries(conditions).map(([path, condition]) => ({ segments: parsePath(path), condition }));
  return matchLeaves(leaves, target, '', scope);
}

function matchLeaves(leaves: readonly Leaf[], target: unknown, base: string, scope: OperandScope): FieldsOutcome {
  const parts: Part[] = [];
  const groups = new Map<string, Extract<Part, { kind: 'group' }>>();
  for (const leaf of leaves) {
    const k = leaf.segments.findIndex(selectsMany);
    if (k < 0) {
      parts.push({ kind: 'leaf', leaf });
      continue;
    }
    const prefix = leaf.segments.slice(0, k + 1);
    const id = JSON.stringify(prefix);
    let group = groups.get(id);
    if (!group) {
      group = { kind: 'group', prefix, rest: [] };
      groups.set(id, group);
      parts.push(group);
    }
    group.rest.push({ segments: leaf.segments.slice(k + 1), condition: leaf.condition });
  }
  return combine(parts.map((p) => (p.kind === 'leaf' ? matchLeaf(p.leaf, target, base, scope) : matchGroup(p.prefix, p.rest, target, base, scope))));
}

function combine(outcomes: FieldsOutcome[]): FieldsOutcome {
  const passed = outcomes.flatMap((o) => o.passed);
  const failed = outcomes.flatMap((o) => o.failed);
  const ok = outcomes.every((o) => o.ok);
  return {
    ok,
    why: (ok ? passed : failed).join('; '),
    held: outcomes.reduce((n, o) => n + o.held, 0),
    total: outcomes.reduce((n, o) => n + o.total, 0),
    passed,
    failed,
  };
}

/** A path without `*` or filters names at most one place. */
function matchLeaf(leaf: Leaf, target: unknown, base: string, scope: OperandScope): FieldsOutcome {
  const place = resolveSegments(target, leaf.segments, base)[0];
  const outcome = matchValue(leaf.condition, place?.value, scope);
  const why = `${place?.path ?? formatSegments(leaf.segments, base)} ${outcome.why}`;
  return { ok: outcome.ok, why, held: outcome.ok ? 1 : 0, total: 1, passed: outcome.ok ? [why] : [], failed: outcome.ok ? [] : [why] };
}

/** The conditions under one `*`/filter prefix: some single element must satisfy all of them. */
function matchGroup(prefix: readonly PathSegment[], rest: readonly Leaf[], target: unknown, base: string, scope: OperandScope): FieldsOutcome {
  const written = formatSegments(prefix, base);
  const elements = resolveSegments(target, prefix, base);
  // Nothing to bind the prefix to: each condition sees a missing value (`exists: false` holds).
  if (elements.length === 0) return matchLeaves(rest, undefined, written, scope);
  let best: { outcome: FieldsOutcome; path: string } | undefined;
  for (const element of elements) {
    const outcome = matchLeaves(rest, element.value, element.path, scope);
    if (outcome.ok) return outcome;
    if (!best || outcome.held > best.outcome.held) best = { outcome, path: element.path };
  }
  const { outcome, path } = best!;
  const count = `${elements.length} element${elements.length === 1 ? '' : 's'}`;
  const failure =
    outcome.total === 1
      ? `none of the ${count} of ${written} satisfies it: ${outcome.failed.join('; ')}`
      : `no one element of ${written} satisfies all ${outcome.total} conditions (of ${count}); the closest, ${path}, has ${
          outcome.passed.length ? `${outcome.passed.join('; ')} but ` : ''
        }${outcome.failed.join('; ')}`;
  return { ...outcome, ok: false, why: failure, failed: [failure] };
}
