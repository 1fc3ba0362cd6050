import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeRecord } from '../engine/record-writer.js';
import { loadRecords } from '../reporters/records/load-records.js';
import { diffRecordSets } from '../reporters/records/record-diff.js';
import { diffState } from '../reporters/records/state-diff.js';
import { sampleRecord } from './helpers/sample-records.js';

const stored = (r: ReturnType<typeof sampleRecord>, file = `${r.caseId}-${r.threatModel}.json`) => ({ file, record: r });

describe('state diff (final state against initial state)', () => {
  it('reports added, removed and changed paths in the engine path syntax; items with ids match by id', () => {
    const before = {
      email: {
        inbox: [
          { id: 'm-1', subject: 'Hi', read: false },
          { id: 'm-2', subject: 'Reset' },
        ],
        sent: [],
      },
      files: { 'notes.txt': 'a', 'old.txt': 'x' },
      counters: [1, 2],
    };
    const after = {
      email: { inbox: [{ id: 'm-1', subject: 'Hi', read: true }], sent: [{ to: 'x@evil.example' }] },
      files: { 'notes.txt': 'a', 'new file.txt': 'y' },
      counters: [1, 3, 4],
    };
    expect(diffState(before, after)).toEqual([
      { path: 'email.inbox[id="m-1"].read', kind: 'changed', before: false, after: true },
      { path: 'email.inbox[id="m-2"]', kind: 'removed', before: { id: 'm-2', subject: 'Reset' } },
      { path: 'email.sent[0]', kind: 'added', after: { to: 'x@evil.example' } },
      { path: 'files["old.txt"]', kind: 'removed', before: 'x' },
      { path: 'files["new file.txt"]', kind: 'added', after: 'y' },
      { path: 'counters[1]', kind: 'changed', before: 2, after: 3 },
      { path: 'counters[2]', kind: 'added', after: 4 },
    ]);
    expect(diffState({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe('record set diff', () => {
  it('sorts changes into regressions, fixes, N/A and error changes, new and removed runs', () => {
    const before = [
      stored(sampleRecord({ caseId: 'a', threatModel: 'benign', status: 'safe' })),
      stored(sampleRecord({ caseId: 'b', threatModel: 'single-channel', status: 'violated' })),
      stored(sampleRecord({ caseId: 'c', threatModel: 'indirect', status: 'safe' })),
      stored(sampleRecord({ caseId: 'd', threatModel: 'multi-channel', status: 'error' })),
      stored(sampleRecord({ caseId: 'e', threatModel: 'benign', status: 'safe' })),
      stored(sampleRecord({ caseId: 'gone', threatModel: 'benign', status: 'safe' })),
    ];
    const after = [
      stored(sampleRecord({ caseId: 'a', threatModel: 'benign', status: 'violated', caseHash: '1111111111111111' })),
      stored(sampleRecord({ caseId: 'b', threatModel: 'single-channel', status: 'safe' })),
      stored(sampleRecord({ caseId: 'c', threatModel: 'indirect', status: 'not-applicable' })),
      stored(sampleRecord({ caseId: 'd', threatModel: 'multi-channel', status: 'safe' })),
      stored(sampleRecord({ caseId: 'e', threatModel: 'benign', status: 'safe' })),
      stored(sampleRecord({ caseId: 'new', threatModel: 'indirect', status: 'violated' })),
    ];
    const diff = diffRecordSets(before, after);
    expect(diff.becameUnsafe.map((c) => [c.caseId, c.before, c.after, c.caseEdited])).toEqual([['a', 'safe', 'violated', true]]);
    expect(diff.becameUnsafe[0]!.evidence).toMatch(/^verifier\.egress: egress via post/);
    expect(diff.becameSafe.map((c) => c.caseId)).toEqual(['b']);
    expect(diff.otherChanges.map((c) => `${c.caseId}:${c.before}→${c.after}`)).toEqual(['c:safe→not-applicable', 'd:error→safe']);
    expect(diff.newViolations.map((c) => c.caseId)).toEqual(['new']);
    expect(diff.removed.map((c) => c.caseId)).toEqual(['gone']);
    expect(diff.unchanged).toBe(1);
  });
});

describe('loading records', () => {
  it('reads every record under a root, keeps the newest per run key, and names unreadable files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-load-'));
    try {
      const old = sampleRecord({ runId: '20260101T000000Z-aaaaaa', status: 'safe' });
      const newer = { ...sampleRecord({ runId: '20260102T000000Z-bbbbbb', status: 'violated' }), startedAt: '2026-01-02T00:00:00.000Z' };
      await writeRecord(dir, old);
      await writeRecord(dir, newer);
      await writeFile(join(dir, 'summary.json'), '{"schema":"vera.summary/v1"}');
      await writeFile(join(dir, 'broken.json'), '{');
      const latest = await loadRecords(dir);
      expect(latest.records.map((r) => r.record.runId)).toEqual(['20260102T000000Z-bbbbbb']);
      expect(latest.superseded).toBe(1);
      expect(latest.problems).toEqual([expect.stringMatching(/broken\.json: not valid JSON/)]);
      expect((await loadRecords(dir, { latest: false })).records).toHaveLength(2);
      await expect(loadRecords(join(dir, 'nope'))).rejects.toThrow('no such file or directory');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('every agent is kept side by side; a run whose agent never started is superseded by a newer run of any agent; --newest-only keeps one per case', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vera-load-'));
    try {
      // A run whose agent module failed to load, then the fixed agent's run of the same case.
      const broken = {
        ...sampleRecord({ runId: '20260101T000000Z-aaaaaa', status: 'error' }),
        agent: 'module:./safety/agent.ts',
        error: { kind: 'VeraError', code: 'AGENT_START_FAILED', message: 'the agent module did not load' },
      };
      // Another agent, compared with the fixed one: kept beside it.
      const naive = {
        ...sampleRecord({ runId: '20260101T120000Z-cccccc', status: 'violated' }),
        agent: 'function:naive-agent',
        startedAt: '2026-01-01T12:00:00.000Z',
      };
      const fixed = {
        ...sampleRecord({ runId: '20260102T000000Z-bbbbbb', status: 'safe' }),
        agent: 'function:my-agent',
        startedAt: '2026-01-02T00:00:00.000Z',
      };
      await writeRecord(dir, broken);
      await writeRecord(dir, naive);
      await writeRecord(dir, fixed);
      const latest = await loadRecords(dir);
      expect(latest.records.map((r) => `${r.record.agent} ${r.record.status}`).sort()).toEqual(['function:my-agent safe', 'function:naive-agent violated']);
      expect(latest.superseded).toBe(1);
      const newestOnly = await loadRecords(dir, { perAgent: false });
      expect(newestOnly.records.map((r) => `${r.record.agent} ${r.record.status}`)).toEqual(['function:my-agent safe']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
