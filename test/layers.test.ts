import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/run-vitest.js';

/**
 * The layers point one way (docs/architecture.md): the contracts at the bottom import nothing of
 * the project; the sandbox, the model provider, the control agents and the adapters build on
 * them; the runner orchestrates those; the pipeline, the reporters, the plugin and the CLI sit on
 * top. The table is every folder-to-folder import allowed; a new edge the wrong way fails here,
 * naming the file. Tests, benchmarks and scripts may import anything.
 *
 * Imports are read by a TypeScript parser (oxc, through rolldown's `parseAst`), not a pattern: every
 * form counts — value, type-only, side-effect, re-export, dynamic `import()`, `import('…')` types,
 * `require`, any quoting or spacing — and so do imports of the package by its own name
 * (`vera-safety/sandbox`), mapped to the folder its `exports` entry points at.
 */
const ALLOWED: Record<string, readonly string[]> = {
  engine: [],
  // `vera-safety/case`: what a *.case.ts module imports — the case format's types and `defineCase`.
  case: ['engine'],
  sandbox: ['engine'],
  provider: ['engine'],
  // The scripted model registers with the model layer's one registry (provider/scripted-plan-sinks.ts).
  testing: ['engine', 'provider'],
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
const SOURCE = /\.(ts|mts|cts)$/;

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string | { import?: string }> };

/** The folder a specifier of the package's own name lands in (`vera-safety/runner` → runner). */
function selfImportFolder(specifier: string): string | undefined {
  if (specifier !== pkg.name && !specifier.startsWith(`${pkg.name}/`)) return undefined;
  const entry = pkg.exports[`.${specifier.slice(pkg.name.length)}`];
  const target = typeof entry === 'string' ? entry : entry?.import;
  // ./dist/<folder>/index.js
  return target?.split('/')[2] ?? '(not exported)';
}

/** Every module specifier in a source text: each form of import, export-from, dynamic import, type import and require. */
function specifiersOf(source: string, file: string): string[] {
  const ast = parseAst(source, { lang: 'ts', sourceType: 'module' }, file);
  const out: string[] = [];
  const literal = (node: unknown) => {
    const n = node as { type?: string; value?: unknown; quasis?: Array<{ value: { cooked: string } }>; expressions?: unknown[] } | undefined;
    if (n?.type === 'Literal' && typeof n.value === 'string') out.push(n.value);
    else if (n?.type === 'TemplateLiteral' && n.expressions?.length === 0) out.push(n.quasis![0]!.value.cooked);
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, any>;
    switch (n.type) {
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
      case 'ExportNamedDeclaration':
      case 'ImportExpression':
        literal(n.source);
        break;
      case 'TSImportType':
        // oxc names it `source`; other ESTree dialects `argument` (a literal type).
        literal(n.source ?? (n.argument?.type === 'TSLiteralType' ? n.argument.literal : n.argument));
        break;
      case 'TSExternalModuleReference':
        literal(n.expression);
        break;
      case 'CallExpression':
        if (n.callee?.type === 'Identifier' && n.callee.name === 'require') literal(n.arguments?.[0]);
        break;
    }
    for (const [key, value] of Object.entries(n)) if (key !== 'type' && value && typeof value === 'object') walk(value);
  };
  walk(ast);
  return out;
}

/** The project folder each import of a file lands in (relative paths resolved, self-imports mapped). */
function importsOf(file: string, source = readFileSync(file, 'utf8')): Array<{ specifier: string; folder: string }> {
  return specifiersOf(source, file).flatMap((specifier) => {
    if (specifier.startsWith('./') || specifier.startsWith('../'))
      return [{ specifier, folder: relative(REPO, resolve(dirname(file), specifier)).split('/')[0]! }];
    const folder = selfImportFolder(specifier);
    return folder ? [{ specifier, folder }] : [];
  });
}

/** The wrong-way edges among files (the one check both the repository and the probes go through). */
function wrongEdges(files: ReadonlyArray<{ file: string; source?: string }>): string[] {
  const wrong: string[] = [];
  for (const { file, source } of files) {
    const layer = relative(REPO, file).split('/')[0]!;
    if (!LAYERS.includes(layer)) continue;
    for (const { specifier, folder } of importsOf(file, source)) {
      if (folder === layer || !(LAYERS.includes(folder) || folder === '(not exported)')) continue;
      if (!ALLOWED[layer]!.includes(folder))
        wrong.push(
          `${relative(REPO, file)} imports ${specifier} (${layer} → ${folder}; ${layer} may import: ${ALLOWED[layer]!.join(', ') || 'nothing of the project'})`,
        );
    }
  }
  return wrong;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name) && !/\.d\.[mc]?ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Modules that reach the network or start processes: the contracts layer may use none of them. */
const IO_MODULES = /^(node:)?(child_process|net|http|https|http2|dgram|dns|tls|cluster|worker_threads)$|^undici$/;

/**
 * Network or process I/O in a source text — an I/O module imported, or `fetch` called — or state
 * kept for the whole process (`globalThis`): the contracts hold data and pure rules only.
 */
function ioOf(source: string, file: string): string[] {
  const found = specifiersOf(source, file).filter((s) => IO_MODULES.test(s));
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, any>;
    if (n.type === 'Identifier' && n.name === 'globalThis') found.push('globalThis');
    if (n.type === 'CallExpression') {
      const callee = n.callee;
      if ((callee?.type === 'Identifier' && callee.name === 'fetch') || (callee?.type === 'MemberExpression' && callee.property?.name === 'fetch'))
        found.push('fetch()');
    }
    for (const [key, value] of Object.entries(n)) if (key !== 'type' && value && typeof value === 'object') walk(value);
  };
  walk(parseAst(source, { lang: 'ts', sourceType: 'module' }, file));
  return found;
}

describe('the layers point one way', () => {
  it('every folder imports only the folders below it', () => {
    const files = LAYERS.flatMap((layer) => sourceFiles(join(REPO, layer)).map((file) => ({ file })));
    expect(files.length).toBeGreaterThan(300);
    expect(wrongEdges(files)).toEqual([]);
  });

  it('the contracts do no network or process I/O (no fetch, no child_process, net, http, dns…) and keep no process-wide state: the orchestration does', () => {
    const io = sourceFiles(join(REPO, 'engine')).flatMap((file) => ioOf(readFileSync(file, 'utf8'), file).map((what) => `${relative(REPO, file)}: ${what}`));
    expect(io).toEqual([]);
    // The probe: each form is seen.
    for (const source of [
      `const r = await fetch('http://x');`,
      `const r = await globalThis.fetch(u);`,
      `import { spawn } from 'node:child_process';`,
      `import net from 'net';`,
      `const h = await import('node:http');`,
      `const sinks = ((globalThis as any)[KEY] ??= new Map());`,
    ]) {
      expect(ioOf(source, 'engine/probe.ts'), source).not.toEqual([]);
    }
    expect(ioOf(`import { readFile } from 'node:fs/promises'; const fetchPlan = 1;`, 'engine/probe.ts')).toEqual([]);
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

  it('catches a wrong-way edge in every form an import can take, and passes the allowed and the look-alikes', () => {
    // Each probe is a file of the bottom layer (which may import nothing) reaching the sandbox.
    const forms = [
      `import { a } from '../sandbox/a.js';`,
      `import { a } from "../sandbox/a.js";`,
      `import {a} from'../sandbox/a.js';`,
      `import '../sandbox/side-effect.js';`,
      `import type { A } from '../sandbox/types.js';`,
      `import { type A, b } from '../sandbox/mixed.js';`,
      `export * from '../sandbox/all.js';`,
      `export { a } from '../sandbox/named.js';`,
      `export type { A } from '../sandbox/types.js';`,
      `const m = await import('../sandbox/lazy.js');`,
      'const m = await import(`../sandbox/template.js`);',
      `let t: import('../sandbox/types.js').Thing;`,
      `import x = require('../sandbox/cjs.js');`,
      `const c = require("../sandbox/cjs.js");`,
      `import { environments } from 'vera-safety/sandbox';`,
      `import {\n  a,\n  b,\n} from '../sandbox/multi-line.js';`,
    ];
    for (const [i, source] of forms.entries()) {
      expect(wrongEdges([{ file: join(REPO, `engine/probe-${i}.ts`), source }]), source).toEqual([expect.stringContaining('(engine → sandbox;')]);
      // The same in a new .mts file.
      expect(wrongEdges([{ file: join(REPO, `engine/probe-${i}.mts`), source }]), `${source} (.mts)`).toHaveLength(1);
    }
    // An import the table allows, a sibling, a package of someone else, and imports only in words.
    const fine = [
      `import { a } from '../engine/a.js';`,
      `import { b } from './b.js';`,
      `import { z } from 'zod';`,
      `// import { a } from '../sandbox/a.js';\nconst s = "import { a } from '../sandbox/a.js'";\n/* export * from '../sandbox/b.js' */`,
    ];
    for (const source of fine) expect(wrongEdges([{ file: join(REPO, 'engine/probe.ts'), source }]), source).toEqual([]);
    expect(wrongEdges([{ file: join(REPO, 'runner/probe.ts'), source: `import { a } from 'vera-safety/sandbox';` }])).toEqual([]);
    // The package's own entry points map to their folders; a subpath it does not export is an edge too.
    expect(selfImportFolder('vera-safety/runner')).toBe('runner');
    expect(selfImportFolder('vera-safety')).toBe('plugin');
    expect(wrongEdges([{ file: join(REPO, 'engine/probe.ts'), source: `import { x } from 'vera-safety/dist/sandbox/x.js';` }])).toHaveLength(1);
  });
});
