import { writeFile } from 'node:fs/promises';
import type { SafetyCase } from '../../engine/case-schema.js';
import { median } from '../../engine/stats.js';
import { checkRobustness, describeRouteOutcome, type RobustnessReport } from '../../runner/robustness.js';
import type { AnyEnvironmentDefinition } from '../../sandbox/environment.js';
import { formatShare, type RobustnessFigures } from '../../pipeline/library/robustness-file.js';

/**
 * `vera check --robustness`: the per-case table, each miss with the route that caused it, and the
 * library's median and minimum. Cases that share their verdict-bearing parts (a family's composed
 * cases differ only in the attack text) are judged once.
 */
export async function reportRobustness(
  cases: ReadonlyArray<{ spec: SafetyCase; file: string }>,
  options: { environments: Record<string, AnyEnvironmentDefinition>; out: (line: string) => void; record?: string | undefined },
): Promise<RobustnessReport[]> {
  const memo = new Map<string, { first: string; pending: Promise<RobustnessReport> }>();
  const reports: RobustnessReport[] = [];
  /** case id → the case whose routes it shares (its misses are listed there once). */
  const sameAs = new Map<string, string>();
  for (const { spec } of cases) {
    const key = JSON.stringify([spec.environments, spec.taxonomy.environment, spec.secrets, spec.init, spec.verifier, spec.witnesses, spec.task]);
    let entry = memo.get(key);
    if (!entry) memo.set(key, (entry = { first: spec.id, pending: checkRobustness(spec, { environments: options.environments }) }));
    else sameAs.set(spec.id, entry.first);
    reports.push({ ...(await entry.pending), caseId: spec.id });
  }
  const width = Math.min(70, Math.max(4, ...reports.map((r) => r.caseId.length)));
  options.out('');
  options.out(`${'case'.padEnd(width)}  routes  same  robustness`);
  for (const r of reports) {
    options.out(`${r.caseId.padEnd(width)}  ${String(r.judged).padStart(6)}  ${String(r.same).padStart(4)}  ${percent(r.share).padStart(10)}`);
    for (const x of r.notTheSameAct) {
      if (!x.declared) options.out(`    ✗ robustness.notTheSameAct names ${x.route}, which none of the case's environments declares`);
    }
    const first = sameAs.get(r.caseId);
    if (first) {
      if (r.misses.length + r.failed.length > 0) options.out(`    (the same witnesses and verifier as ${first}: its misses above)`);
      continue;
    }
    for (const x of r.notTheSameAct) if (x.declared) options.out(`    ⚠ ${x.route} is not tried: another act in this case — ${x.reason}`);
    for (const miss of r.misses) options.out(`    ✗ ${clip(describeRouteOutcome(miss))}`);
    for (const f of r.failed) options.out(`    · route did not run: ${clip(describeRouteOutcome(f))}`);
  }
  const shares = reports.map((r) => r.share).filter((s): s is number => s !== undefined);
  const none = reports.length - shares.length;
  options.out('');
  options.out(
    shares.length === 0
      ? `no route applies to any witness call of these ${reports.length} cases`
      : `robustness over ${shares.length} cases: median ${percent(median(shares))}, minimum ${percent(Math.min(...shares))}; ${reports.filter((r) => r.share === 1).length} at 100%, ${reports.filter((r) => r.share !== undefined && r.share < 0.9).length} below 90%${none ? `; ${none} with no route that applies` : ''}`,
  );
  if (options.record) {
    const figures: RobustnessFigures = { cases: {} };
    for (const r of [...reports].sort((a, b) => (a.caseId < b.caseId ? -1 : 1))) {
      figures.cases[r.caseId] = { routes: r.judged, same: r.same, share: r.share === undefined ? null : round(r.share) };
    }
    await writeFile(options.record, `${JSON.stringify(figures, null, 2)}\n`);
    options.out(`figures written to ${options.record}`);
  }
  return reports;
}

const clip = (line: string) => (line.length > 400 ? `${line.slice(0, 399)}…` : line);
const round = (x: number) => Math.round(x * 10_000) / 10_000;
const percent = formatShare;
