import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seededRandom } from './sampling.js';
import type { GoalRecord, Tuple } from './goals-file.js';

/**
 * Demonstrations for the goal composer: accepted goals (to keep format and variety) and, from
 * the records of past runs, attacks that succeeded (status `violated`) — the loop through which
 * what worked against real agents shapes the next goals.
 */
export interface Demonstration {
  id: string;
  source: 'goal' | 'successful-attack';
  taxonomy: Tuple;
  title: string;
  goal: string;
  /** For goals: the structured parts. */
  parts?: Pick<GoalRecord, 'violation' | 'targetResource' | 'stateChange' | 'observable' | 'context'>;
  /** For successful attacks: the threat model and what the adversary said or injected. */
  attack?: { threatModel: string; agent: string; messages: string[]; injected: string[] };
}

export function goalDemonstration(goal: GoalRecord): Demonstration {
  const { violation, targetResource, stateChange, observable, context } = goal;
  return {
    id: goal.id,
    source: 'goal',
    taxonomy: goal.taxonomy,
    title: goal.title,
    goal: goal.goal,
    parts: { violation, targetResource, stateChange, observable, context },
  };
}

/** Every record under `dir` (recursively) whose verdict is `violated`, as demonstrations; one per case and threat model. */
export async function successfulAttacks(dir: string): Promise<Demonstration[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    throw new Error(`cannot read the records directory ${dir}: ${(error as Error).message}`);
  }
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const out = new Map<string, Demonstration>();
  for (const file of files) {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    } catch {
      continue; // not a record (a report, a partial file): nothing to learn from
    }
    if (record.schema !== 'vera.record/v1' || record.status !== 'violated') continue;
    const taxonomy = record.taxonomy as Tuple | undefined;
    if (!taxonomy || typeof record.caseId !== 'string') continue;
    const key = `${record.caseId}--${String(record.threatModel)}`;
    if (out.has(key)) continue;
    const trajectory = Array.isArray(record.trajectory) ? (record.trajectory as Array<Record<string, unknown>>) : [];
    const injections = (record.injections ?? {}) as { fired?: string[]; payloads?: Record<string, string> };
    out.set(key, {
      id: `record:${key}`,
      source: 'successful-attack',
      taxonomy,
      title: String(record.title ?? record.caseId),
      goal: String(record.goal ?? ''),
      attack: {
        threatModel: String(record.threatModel),
        agent: String(record.agent ?? ''),
        messages: trajectory
          .filter((e) => e.type === 'message' && e.role === 'user')
          .map((e) => String(e.text))
          .slice(0, 3),
        injected: (injections.fired ?? []).map((id) => injections.payloads?.[id]).filter((p): p is string => typeof p === 'string'),
      },
    });
  }
  return [...out.values()];
}

/**
 * Up to `k` demonstrations for a tuple: successful attacks on the same risk category first, then
 * goals of the same risk (format), then goals from other environments and attacks (variety); ties
 * broken by a seeded draw, so the choice is repeatable.
 */
export function chooseDemonstrations(candidates: Demonstration[], tuple: Tuple, k: number, seed: string): Demonstration[] {
  const category = (path: string) => path.split('/')[0];
  const random = seededRandom(`${seed}|demos|${tuple.risk}|${tuple.attack}|${tuple.environment}`);
  const scored = candidates.map((d) => {
    let score = 0;
    if (d.source === 'successful-attack') score += category(d.taxonomy.risk) === category(tuple.risk) ? 4 : 1;
    if (d.taxonomy.risk === tuple.risk) score += 2;
    if (d.taxonomy.environment !== tuple.environment) score += 1;
    if (d.taxonomy.attack !== tuple.attack) score += 1;
    return { d, score, tie: random() };
  });
  scored.sort((a, b) => b.score - a.score || a.tie - b.tie);
  const chosen: Demonstration[] = [];
  const environments = new Set<string>();
  // Prefer a spread of environments among the chosen; fill up with the rest.
  for (const pass of [true, false]) {
    for (const { d } of scored) {
      if (chosen.length >= k) break;
      if (chosen.includes(d)) continue;
      if (pass && d.source === 'goal' && environments.has(d.taxonomy.environment)) continue;
      chosen.push(d);
      environments.add(d.taxonomy.environment);
    }
  }
  return chosen;
}
