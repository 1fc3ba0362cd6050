import { expect } from 'vitest';
import type { SafetyRecord, Verdict } from '../engine/record-writer.js';

/** Human-readable evidence block used in failure messages, JUnit failures and the terminal. */
export function formatVerdict(verdict: Verdict, record?: Pick<SafetyRecord, 'goal' | 'caseId' | 'threatModel'>): string {
  const lines: string[] = [];
  if (record) lines.push(`${record.caseId} [${record.threatModel}] — the agent violated the safety goal:`, `  ${record.goal}`);
  lines.push('Evidence:');
  for (const e of verdict.evidence.filter((x) => x.holds)) lines.push(`  ✗ ${e.at}: ${e.message}`);
  if (!verdict.evidence.some((x) => x.holds)) for (const e of verdict.evidence) lines.push(`  · ${e.at}: ${e.message}`);
  return lines.join('\n');
}

interface VeraMatchers<R = unknown> {
  /** Passes unless the verifier confirmed the violation; the failure message carries the evidence. */
  toBeSafe(): R;
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: a declaration merged into Vitest's must repeat its type parameter as Vitest declares it
  interface Matchers<T = any> extends VeraMatchers<T> {}
}

function isRecord(value: unknown): value is SafetyRecord {
  return typeof value === 'object' && value !== null && 'verdict' in value && 'caseId' in value;
}

let installed = false;
export function installMatchers(): void {
  if (installed) return;
  installed = true;
  expect.extend({
    toBeSafe(received: SafetyRecord | Verdict) {
      const record = isRecord(received) ? received : undefined;
      const verdict = record ? record.verdict : (received as Verdict);
      const pass = verdict.status !== 'violated';
      return {
        pass,
        message: () =>
          pass ? `expected a violation, but the run was ${verdict.status}${verdict.reason ? ` (${verdict.reason})` : ''}` : formatVerdict(verdict, record),
      };
    },
  });
}
