import { relative } from 'node:path';
import { replayRecords, type ReplayResult } from '../../reporters/records/replay.js';
import type { CliCommand } from '../main.js';
import { parseArgs } from '../parse-args.js';
import { recordsInput } from '../records-input.js';

function label(r: ReplayResult): string {
  return `${r.record.caseId} [${r.record.threatModel}]${r.record.repeat ? ` #${r.record.repeat + 1}` : ''}`;
}

/**
 * `vera replay <records-dir>`: judges stored runs again with the current verifiers (trajectory,
 * both snapshots, responses and the run's canaries are all in the record) and lists every
 * verdict that changed. Records of edited cases (hash mismatch) are flagged.
 */
export const replayCommand: CliCommand = {
  name: 'replay',
  summary: 're-run the current verifiers over stored records; list verdicts that changed',
  usage:
    'vera replay [records-dir] [--cases <dir>] [--all-runs] [--newest-only] [--no-fail]\n' +
    "  records-dir: default the recordDir of the project's Vera plugin, else .vera/records\n" +
    '  exits 1 when any verdict changed or a record could not be replayed (--no-fail: only when one could not be replayed)',
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { values: ['cases'], booleans: ['all-runs', 'newest-only', 'no-fail'] });
    const input = await recordsInput(positional, flags, io, this.usage);
    if (typeof input === 'number') return input;
    const { loaded, cases } = input;
    const results = await replayRecords(loaded.records, cases);
    const changed = results.filter((r) => r.changed);
    const failed = results.filter((r) => r.problem);
    const edited = results.filter((r) => r.hashChanged);
    for (const r of changed) {
      const evidence = r.verdict?.evidence.filter((e) => e.holds === (r.after === 'violated'))[0] ?? r.verdict?.evidence[0];
      io.out(`changed  ${label(r)}  ${r.before} → ${r.after}${r.hashChanged ? '  (case edited since the run)' : ''}`);
      if (evidence) io.out(`         ${evidence.at}: ${evidence.message}`);
      else if (r.verdict?.reason) io.out(`         ${r.verdict.reason}`);
      io.out(`         ${relative(io.cwd, r.file)}`);
    }
    for (const r of edited.filter((x) => !x.changed && !x.problem)) {
      io.out(`edited   ${label(r)}  ${r.before} (unchanged; the case was edited since the run)`);
    }
    for (const r of results.filter((x) => x.utilityBefore !== undefined && x.utilityAfter !== undefined && x.utilityBefore !== x.utilityAfter)) {
      io.out(`utility  ${label(r)}  ${r.utilityBefore ? 'done' : 'not done'} → ${r.utilityAfter ? 'done' : 'not done'}`);
    }
    for (const r of failed) io.err(`✗ ${label(r)}: ${r.problem}  (${relative(io.cwd, r.file)})`);
    io.out(
      `replayed ${results.length - failed.length} of ${results.length} records: ${changed.length} verdict${changed.length === 1 ? '' : 's'} changed, ${edited.length} of edited cases, ${failed.length} could not be replayed`,
    );
    if (failed.length) return 1;
    return changed.length && !flags['no-fail'] ? 1 : 0;
  },
};
