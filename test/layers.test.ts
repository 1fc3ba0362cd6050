import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/run-vitest.js';

/**
 * The layers point one way (docs/architecture.md): the contracts at the bottom import nothing of
 * the project; the sandbox, the model provider, the control agents and the adapters build on
 * them; the runner orchestrates those; the pipeline, the reporters, the plugin and the CLI sit on
 * top. The table is every folder-to-folder import allowed; a new edge the wrong way fails here,
 * naming the file. Tests, benchmarks and scripts may import anything.
 */
const ALLOWED: Record<string, readonly string[]> = {
  engine: [],
  sandbox: ['engine'],
  provider: ['engine'],
  testing: ['engine'],
  control: ['engine', 'provider', 'sandbox'],
  adapters: ['engine', 'provider', 'sandbox'],
  runner: ['engine', 'sandbox', 'provider', 'control', 'adapters'],
  reporters: ['engine', 'provider', 'runner'],
  // The pipeline's dry run drives the embedded scripted model (testing) through the reference agent.
  pipeline: ['engine', 'sandbox', 'provider', 'adapters', 'testing', 'runner', 'reporters'],
  plugin: ['engine', 'sandbox', 'provider', 'control', 'adapters', 'testing', 'runner', 'reporters'],
  cli: ['engine', 'sandbox', 'provider', 'control', 'adapters', 'testing', 'runner', 'reporters', 'pipeline', 'plugin'],
};
const LAYERS = Object.keys(ALLOWED);

/** Every relative import or re-export of a source file, resolved to the folder it lands in. */
function importsOf(file: string): Array<{ specifier: string; folder: string }> {
  const source = readFileSync(file, 'utf8');
  const out: Array<{ specifier: string; folder: string }> = [];
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) {
    const specifier = (m[1] ?? m[2])!;
    out.push({ specifier, folder: relative(REPO, resolve(dirname(file), specifier)).split('/')[0]! });
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('the layers point one way', () => {
  it('every folder imports only the folders below it', () => {
    const wrong: string[] = [];
    for (const layer of LAYERS) {
      for (const file of sourceFiles(join(REPO, layer))) {
        for (const { specifier, folder } of importsOf(file)) {
          if (folder === layer || !LAYERS.includes(folder)) continue;
          if (!ALLOWED[layer]!.includes(folder))
            wrong.push(
              `${relative(REPO, file)} imports ${specifier} (${layer} → ${folder}; ${layer} may import: ${ALLOWED[layer]!.join(', ') || 'nothing of the project'})`,
            );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the table has no cycle, and every source folder is in it', () => {
    const order = [...LAYERS];
    for (const [layer, below] of Object.entries(ALLOWED)) for (const b of below) expect(order.indexOf(b), `${layer} → ${b}`).toBeLessThan(order.indexOf(layer));
    const folders = readdirSync(REPO, { withFileTypes: true })
      .filter(
        (e) =>
          e.isDirectory() &&
          !e.name.startsWith('.') &&
          !['node_modules', 'dist', 'test', 'bench', 'scripts', 'cases', 'docs', 'docker', 'bin', 'api'].includes(e.name),
      )
      .map((e) => e.name);
    expect(folders.filter((f) => sourceFiles(join(REPO, f)).length > 0 && !LAYERS.includes(f))).toEqual([]);
  });

  it('sees a wrong-way edge when there is one', () => {
    // The probe: the runner's own case-run imports the sandbox, which the bottom layer may not.
    const caseRun = join(REPO, 'runner/case-run.ts');
    expect(importsOf(caseRun).map((i) => i.folder)).toContain('sandbox');
    expect(ALLOWED.engine).not.toContain('sandbox');
  });
});
