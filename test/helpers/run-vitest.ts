import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
export const FIXTURE = join(REPO, 'test/fixtures/plugin-project');
const VITEST = join(REPO, 'node_modules/vitest/vitest.mjs');

export interface JsonAssertion {
  title: string;
  fullName: string;
  status: 'passed' | 'failed' | 'skipped' | 'pending' | 'todo';
  location?: { line: number; column: number };
  failureMessages: string[];
  meta?: { vera?: Record<string, unknown> };
}
export interface JsonTestFile {
  name: string;
  status: string;
  message: string;
  assertionResults: JsonAssertion[];
}
export interface VitestRun {
  code: number | null;
  stdout: string;
  stderr: string;
  files: JsonTestFile[];
  outDir: string;
}

/** Runs Vitest (the real CLI, in a child process) on the fixture project and reads its JSON report. */
export async function runFixture(options: { args?: string[]; env?: Record<string, string>; root?: string } = {}): Promise<VitestRun> {
  const outDir = await mkdtemp(join(tmpdir(), 'vera-fixture-out-'));
  const json = join(outDir, 'report.json');
  const args = [
    VITEST,
    'run',
    '--root',
    options.root ?? FIXTURE,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${json}`,
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: options.root ?? FIXTURE,
    env: { ...process.env, FIXTURE_RECORDS: join(outDir, 'records'), NO_COLOR: '1', FORCE_COLOR: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code, stdout, stderr } = await collect(child);
  let files: JsonTestFile[] = [];
  try {
    files = (JSON.parse(await readFile(json, 'utf8')) as { testResults: JsonTestFile[] }).testResults;
  } catch {
    // No report: the caller's assertions on `files` fail with the output attached.
  }
  return { code, stdout, stderr, files, outDir };
}

export function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolvePromise) => child.on('close', (code) => resolvePromise({ code, stdout, stderr })));
}

export function testsOf(run: VitestRun, fileSuffix: string): JsonAssertion[] {
  const file = run.files.find((f) => f.name.endsWith(fileSuffix));
  if (!file) throw new Error(`no results for ${fileSuffix}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return file.assertionResults;
}
