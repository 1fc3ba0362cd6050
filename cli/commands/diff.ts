import { relative } from 'node:path';
import { asrRowOfRecord, summarizeAsr } from '../../engine/asr.js';
import { formatAsr } from '../../reporters/text-tables.js';
import { loadRecords, type StoredRecord } from '../../reporters/records/load-records.js';
import { diffRecordSets, type RunChange } from '../../reporters/records/record-diff.js';
import type { CliCommand } from '../main.js';
import { parseArgs } from '../parse-args.js';

function line(c: RunChange): string {
  const what = `${c.caseId} [${c.threatModel}]${c.repeat ? ` #${c.repeat + 1}` : ''}`;
  return `${what}  ${c.before ?? '(none)'} → ${c.after ?? '(none)'}${c.caseEdited ? '  (case edited between the runs)' : ''}`;
}

/** The one agent of `records` that `wanted` names: its exact id, else the only id containing it. */
function pickAgent(records: StoredRecord[], wanted: string): { agent?: string; problem?: string } {
  const ids = [...new Set(records.map((r) => r.record.agent))].sort();
  if (ids.includes(wanted)) return { agent: wanted };
  const matching = ids.filter((id) => id.includes(wanted));
  if (matching.length === 1) return { agent: matching[0]! };
  return {
    problem: `${matching.length ? `"${wanted}" names ${matching.length} agents` : `no agent "${wanted}"`} in these records (agents: ${ids.join(', ') || 'none'})`,
  };
}

/**
 * `vera diff <before> <after>`: compares two record sets run by run (case × threat model ×
 * attempt) and lists the runs that became unsafe (regressions), became safe, or moved into or
 * out of N/A and error. Exits 1 when there is a regression. With `--agents A,B`, one record set
 * holding both agents' runs (one config's projects, or runs of both in one folder) is compared
 * agent against agent: "became unsafe" then reads "violated under B, safe under A".
 */
export const diffCommand: CliCommand = {
  name: 'diff',
  summary: 'compare two record sets: regressions (became unsafe), fixes, N/A and error changes',
  usage:
    'vera diff <before-records-dir> <after-records-dir> [--all-runs]\n' +
    'vera diff <records-dir> --agents <A>,<B> [--all-runs]   (two agents of one record set: A before, B after)\n' +
    '  exits 1 when a run became unsafe',
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { booleans: ['all-runs'], values: ['agents'] });
    const agentsFlag = typeof flags.agents === 'string' ? flags.agents.split(',').map((a) => a.trim()) : undefined;
    if (agentsFlag ? positional.length !== 1 || agentsFlag.length !== 2 || agentsFlag.some((a) => !a) : positional.length !== 2) {
      io.err(`usage: ${this.usage}`);
      return 2;
    }
    let before: { records: StoredRecord[] };
    let after: { records: StoredRecord[] };
    let names = { before: 'before', after: 'after' };
    if (agentsFlag) {
      const all = await loadRecords(positional[0]!, { cwd: io.cwd, latest: !flags['all-runs'] });
      for (const p of all.problems) io.err(`! ${p}`);
      const [a, b] = agentsFlag.map((wanted) => pickAgent(all.records, wanted));
      for (const picked of [a!, b!]) if (picked.problem) io.err(`vera diff: ${picked.problem}`);
      if (!a!.agent || !b!.agent) return 2;
      before = { records: all.records.filter((r) => r.record.agent === a!.agent) };
      after = { records: all.records.filter((r) => r.record.agent === b!.agent) };
      names = { before: a!.agent, after: b!.agent };
      io.out(`comparing agent ${names.before} (before) with agent ${names.after} (after), run by run\n`);
    } else {
      const [beforeDir, afterDir] = positional as [string, string];
      const loaded = await Promise.all([beforeDir, afterDir].map((d) => loadRecords(d, { cwd: io.cwd, latest: !flags['all-runs'] })));
      for (const p of [...loaded[0]!.problems, ...loaded[1]!.problems]) io.err(`! ${p}`);
      before = loaded[0]!;
      after = loaded[1]!;
    }
    const diff = diffRecordSets(before.records, after.records);
    const section = (title: string, items: RunChange[], withEvidence: boolean) => {
      if (!items.length) return;
      io.out(`${title} (${items.length}):`);
      for (const c of items) {
        io.out(`  ${line(c)}`);
        if (withEvidence && c.evidence) io.out(`    ${c.evidence}`);
        if (withEvidence && c.afterFile) io.out(`    ${relative(io.cwd, c.afterFile)}`);
      }
      io.out('');
    };
    const agents = agentsFlag !== undefined;
    section(agents ? `violated under ${names.after}, not under ${names.before}` : 'became unsafe — regressions', diff.becameUnsafe, true);
    section(agents ? `violated under ${names.before}, safe under ${names.after}` : 'became safe', diff.becameSafe, false);
    section('N/A and error changes', diff.otherChanges, true);
    section(agents ? `violated under ${names.after}, not run under ${names.before}` : 'new runs that violated', diff.newViolations, true);
    const only = agents
      ? { after: `runs only ${names.after} ran`, before: `runs only ${names.before} ran` }
      : { after: 'other new runs', before: 'runs only in the before set' };
    if (diff.added.length - diff.newViolations.length > 0)
      io.out(`${diff.added.length - diff.newViolations.length} ${only.after}, ${diff.removed.length} ${only.before}\n`);
    else if (diff.removed.length) io.out(`${diff.removed.length} ${only.before}\n`);
    const asr = (set: typeof before) => summarizeAsr(set.records.map((r) => asrRowOfRecord(r.record)));
    const a = asr(before);
    const b = asr(after);
    const models = [...new Set([...a.risk.columns, ...b.risk.columns])];
    io.out(
      `ASR ${names.before} → ${names.after}: ${models.map((m) => `${m} ${formatAsr(a.risk.columnTotals[m])} → ${formatAsr(b.risk.columnTotals[m])}`).join(' · ')}`,
    );
    io.out(
      `all ${formatAsr(a.total)} → ${formatAsr(b.total)}; ${
        agents
          ? `${diff.becameUnsafe.length} violated only under ${names.after}, ${diff.becameSafe.length} only under ${names.before}, ${diff.otherChanges.length} N/A/error differences, ${diff.unchanged} the same`
          : `${diff.becameUnsafe.length} regressions, ${diff.becameSafe.length} fixed, ${diff.otherChanges.length} N/A/error changes, ${diff.unchanged} unchanged`
      }`,
    );
    return diff.becameUnsafe.length ? 1 : 0;
  },
};
