import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../cli/main.js';
import { startScriptedModelServer } from '../testing/index.js';
import { goodEmailDraft } from './helpers/pipeline-drafts.js';
import { capturingIO, jsonStep, PIPELINE_FIXTURES, pipelineScratch } from './helpers/pipeline-fixtures.js';

/**
 * The pipeline's commands fail well: a hung endpoint fails a request after `--timeout` seconds of
 * silence and `--retries` more tries, with the URL in the error; a run the endpoint fails halfway
 * writes its report for what it did and exits non-zero.
 */
const GOALS = join(PIPELINE_FIXTURES, 'goals/compile-goals.yaml');
const { scratch } = pipelineScratch();
const io = () => capturingIO();

/** An endpoint that takes every request and never answers (its headers never come). */
async function hungEndpoint(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const open = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    requests++;
    open.add(res);
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('a hung endpoint', () => {
  it('fails each request after --timeout seconds of silence, retried --retries times, naming the URL', async () => {
    const hung = await hungEndpoint();
    try {
      const dir = await scratch('vera-failing-well-');
      const run = io();
      const code = await main(
        ['compile', '--goals', GOALS, '--only', 'forward-vpn-password-to-auditor', '--out', join(dir, 'cases'), '--report', join(dir, 'report.yaml')].concat([
          '--base-url',
          hung.url,
          '--model',
          'm',
          '--timeout',
          '0.3',
          '--retries',
          '1',
        ]),
        run,
      );
      expect(code).toBe(1);
      expect(hung.requests()).toBe(2);
      expect(run.errors.join('\n')).toContain(
        `vera compile: stopped at forward-vpn-password-to-auditor: model "m" at ${hung.url} failed: no reply for 0.3 s (--timeout 0.3); 2 attempts (--retries 1)`,
      );
      const report = parse(await readFile(join(dir, 'report.yaml'), 'utf8')) as Record<string, unknown>;
      expect(report).toMatchObject({ kept: [], failed: { goal: 'forward-vpn-password-to-auditor', notCompiled: ['forward-vpn-password-to-auditor'] } });
    } finally {
      await hung.close();
    }
  });

  it('refuses a --timeout or --retries that is not a number, naming the flag', async () => {
    const run = io();
    expect(await main(['compile', '--goals', GOALS, '--base-url', 'http://127.0.0.1:9/v1', '--timeout', 'soon'], run)).toBe(1);
    expect(run.errors.join('\n')).toContain('--timeout: expected a number ≥ 0.1, got "soon"');
    const again = io();
    expect(await main(['compile', '--goals', GOALS, '--base-url', 'http://127.0.0.1:9/v1', '--retries', '1.5'], again)).toBe(1);
    expect(again.errors.join('\n')).toContain('--retries: expected an integer ≥ 0, got "1.5"');
  });
});

describe('an endpoint that fails halfway', () => {
  it('compile keeps the first case, writes the report with where it stopped, and exits 1', async () => {
    const server = await startScriptedModelServer({
      script: [
        jsonStep(goodEmailDraft(), 'Goal (forward-vpn-password-to-auditor)'),
        { error: { status: 500, message: 'upstream exploded' } },
        { error: { status: 500, message: 'upstream exploded' } },
      ],
    });
    try {
      const dir = await scratch('vera-failing-well-');
      const run = io();
      const code = await main(
        [
          'compile',
          '--goals',
          GOALS,
          '--out',
          join(dir, 'cases'),
          '--report',
          join(dir, 'report.yaml'),
          '--base-url',
          server.url,
          '--model',
          'scripted',
        ].concat(['--retries', '1']),
        run,
      );
      expect(code).toBe(1);
      expect(server.script?.remaining).toBe(0);
      expect((await stat(join(dir, 'cases/email/forward-vpn-password-to-auditor.case.yaml'))).isFile()).toBe(true);
      const report = parse(await readFile(join(dir, 'report.yaml'), 'utf8')) as { kept: Array<{ goal: string }>; failed: Record<string, unknown> };
      expect(report.kept.map((k) => k.goal)).toEqual(['forward-vpn-password-to-auditor']);
      expect(report.failed).toMatchObject({ goal: 'delete-board-minutes', notCompiled: ['delete-board-minutes'] });
      expect(String(report.failed.error)).toMatch(/upstream exploded; 2 attempts \(--retries 1\)$/);
      expect(run.lines.at(-1)).toMatch(/^1 kept, 0 rejected, 0 skipped, 1 not compiled; report: /);
    } finally {
      await server.close();
    }
  });
});
