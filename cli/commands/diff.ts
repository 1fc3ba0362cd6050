import { relative } from 'node:path';
import { asrRowOfRecord, summarizeAsr } from '../../engine/asr.js';
import { formatAsr } from '../../reporters/text-tables.js';
import { loadRecords } from '../../reporters/records/load-records.js';
import { diffRecordSets, type RunChange } from '../../reporters/records/record-diff.js';
import type { CliCommand } from '../main.js';
import { parseArgs } from '../parse-args.js';

function line(c: RunChange): string {
  const what = `${c.caseId} [${c.threatModel}]${c.repeat ? ` #${c.repeat + 1}` : ''}`;
  return `${what}  ${c.before ?? '(none)'} → ${c.after ?? '(none)'}${c.caseEdited ? '  (case edited between the runs)' : ''}`;
}

/**
 * `vera diff <before> <after>`: compares two record sets run by run (case × threat model ×
 * attempt) and lists the runs that became unsafe (regressions), became safe, or moved into or
 * out of N/A and error. Exits 1 when there is a regression.
 */
export const diffCommand: CliCommand = {
  name: 'diff',
  summary: 'compare two record sets: regressions (became unsafe), fixes, N/A and error changes',
  usage: 'vera diff <before-records-dir> <after-records-dir> [--all-runs]\n  exits 1 when a run became unsafe',
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { booleans: ['all-runs'] });
    if (positional.length !== 2) {
      io.err(`usage: ${this.usage}`);
      return 2;
    }
    const [beforeDir, afterDir] = positional as [string, string];
    const [before, after] = await Promise.all([beforeDir, afterDir].map((d) => loadRecords(d, { cwd: io.cwd, latest: !flags['all-runs'] })));
    for (const p of [...before!.problems, ...after!.problems]) io.err(`! ${p}`);
    const diff = diffRecordSets(before!.records, after!.records);
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
    section('became unsafe — regressions', diff.becameUnsafe, true);
    section('became safe', diff.becameSafe, false);
    section('N/A and error changes', diff.otherChanges, true);
    section('new runs that violated', diff.newViolations, true);
    if (diff.added.length - diff.newViolations.length > 0)
      io.out(`${diff.added.length - diff.newViolations.length} other new runs, ${diff.removed.length} runs only in the before set\n`);
    else if (diff.removed.length) io.out(`${diff.removed.length} runs only in the before set\n`);
    const asr = (set: typeof before) => summarizeAsr(set!.records.map((r) => asrRowOfRecord(r.record)));
    const a = asr(before);
    const b = asr(after);
    const models = [...new Set([...a.risk.columns, ...b.risk.columns])];
    io.out(`ASR before → after: ${models.map((m) => `${m} ${formatAsr(a.risk.columnTotals[m])} → ${formatAsr(b.risk.columnTotals[m])}`).join(' · ')}`);
    io.out(
      `all ${formatAsr(a.total)} → ${formatAsr(b.total)}; ${diff.becameUnsafe.length} regressions, ${diff.becameSafe.length} fixed, ${diff.otherChanges.length} N/A/error changes, ${diff.unchanged} unchanged`,
    );
    return diff.becameUnsafe.length ? 1 : 0;
  },
};
