import { formatProblem, type CaseProblem, type CaseSuiteLoadResult } from '../engine/case-loader.js';
import { redactText } from '../engine/redact.js';
import { CASE_MODULE_FILE, CASE_SOURCE_QUERY } from './case-module.js';
import type { CaseModuleData } from './case-tests.js';
import { parseCaseFileCached } from './parse-cache.js';
import { lineSourceMap, type LineSourceMap } from './source-map.js';

export interface TransformedCase {
  code: string;
  map: LineSourceMap;
}

/**
 * Turns one case file into a test module: one test per case and threat model (a YAML file may
 * hold several cases as documents, a `*.case.ts` module an array), each `test()` call on its own
 * generated line, source-mapped to the line of that threat model, so Vitest, the UI and editors
 * point at the YAML or TypeScript the user wrote. A bad file becomes a module that throws one clear error naming file:line:column and
 * the field — that file fails, the rest of the run goes on.
 */
export function transformCaseFile(
  source: string,
  file: string,
  runtimeImport: string,
  options: {
    schedule?: 'prefetch' | 'fixtures';
    /** Absolute paths of the user's agent and environment modules, imported through Vite (see user-modules.ts). */
    userModules?: readonly string[];
    /** Problems found after parsing (init steps, witnesses: runner/case-validation.ts): the file fails with them. */
    problems?: readonly CaseProblem[];
    /** Only these cases get tests (the library preset's selection); default every case of the file. */
    only?: ReadonlySet<string>;
    /** The file's cases, loaded already (a case module's, evaluated in the main process); default: the YAML source parsed. */
    loaded?: CaseSuiteLoadResult;
    /** The project's name, when the run compares agents: in every test's name. */
    project?: string;
  } = {},
): TransformedCase {
  // The fixtures a test destructures are the ones Vitest sets up for it (it reads the parameter
  // list): the fixture style asks for all of them, the scheduled style for none.
  const params = options.schedule === 'fixtures' ? '{ control, caseRun, task, annotate, skip }' : '{ task, annotate, skip, signal }';
  const parsed = options.loaded ?? parseCaseFileCached(file, source);
  const result = parsed.ok && options.problems?.length ? { ok: false as const, problems: [...options.problems] } : parsed;
  if (!result.ok) {
    const message = `Invalid safety case\n${result.problems.map(formatProblem).join('\n')}`;
    const first = result.problems[0]!;
    const code = [
      `const error = new Error(${JSON.stringify(message)});`,
      `error.name = "CaseFileError";`,
      `error.stack = error.name + ": " + error.message + "\\n    at ${first.file.replace(/["\\]/g, '')}:${first.line}:${first.column}";`,
      'throw error;',
    ].join('\n');
    const at = { line: first.line, column: first.column };
    return { code, map: lineSourceMap({ file, source, positions: [at, at, at, at] }) };
  }
  const lines: string[] = [];
  const positions: Array<{ line: number; column: number }> = [];
  const emit = (code: string, at: { line: number; column: number }) => {
    lines.push(code);
    positions.push(at);
  };
  const top = { line: result.cases[0]!.line, column: 1 };
  const sourceLines = source.split(/\r?\n/);
  const userModules = options.userModules ?? [];
  // A case module's own code is imported too (its values are already embedded below): what it
  // imports is then in the worker's module graph, so watch mode reruns it when a helper changes.
  if (CASE_MODULE_FILE.test(file)) emit(`import ${JSON.stringify(`${file}?${CASE_SOURCE_QUERY}`)};`, top);
  userModules.forEach((path, i) => emit(`import * as __veraUser${i} from ${JSON.stringify(path)};`, top));
  emit(`import { defineCaseTests as __veraDefine, provideUserModules as __veraProvide } from ${JSON.stringify(runtimeImport)};`, top);
  if (userModules.length > 0) emit(`__veraProvide({ ${userModules.map((path, i) => `${JSON.stringify(path)}: __veraUser${i}`).join(', ')} });`, top);
  result.cases.forEach((loaded, i) => {
    if (options.only && !options.only.has(loaded.spec.id)) return;
    const name = `__veraTest${i}`;
    const data: CaseModuleData = {
      file,
      spec: loaded.spec,
      line: loaded.line,
      verifier: loaded.verifierPosition,
      // Redacted as every other output is: a case file may hold a real key near its verifier (an init step seeding it).
      verifierFrame: codeFrame(sourceLines, loaded.verifierPosition, 2, (line) => redactText(line, { caseText: source })),
      ...(options.project ? { project: options.project } : {}),
    };
    // One string literal, not an object literal: a case's data is large (a library file's cases are
    // 200 KB), and Vite parses every module it serves — a string is one AST node (4–5× faster to
    // parse there, and faster for V8 to compile than the same object literal).
    emit(`const ${name} = __veraDefine(JSON.parse(${JSON.stringify(JSON.stringify(data))}));`, { line: loaded.line, column: 1 });
    for (const model of loaded.spec.threatModels) {
      emit(`${name}(${JSON.stringify(model)}, async (${params}) => { await ${name}.execute(${params}); });`, loaded.threatModelLines[model]);
    }
  });
  return { code: `${lines.join('\n')}\n`, map: lineSourceMap({ file, source, positions }) };
}

/**
 * The lines around `at` as Vitest draws a code frame (numbered, a caret under the column). A
 * violation carries its verifier's frame ready-made: Vitest would otherwise build it per failed
 * test by reading the whole case file and splitting it twice (a library file is 10 000 lines),
 * which made printing 5000 violations — and `--merge-reports` of a library run — take minutes.
 */
export function codeFrame(
  lines: readonly string[],
  at: { line: number; column: number },
  around = 2,
  clean: (line: string) => string = (line) => line,
): string {
  const out: string[] = [];
  const gutter = (n: number | string) => `${String(n).padStart(3)}|`;
  for (let n = Math.max(1, at.line - around); n <= Math.min(lines.length, at.line + around); n++) {
    const text = clean(lines[n - 1]!).replace(/\t/g, ' ');
    out.push(`${gutter(n)} ${text.length > 120 ? `${text.slice(0, 119)}…` : text}`.trimEnd());
    if (n === at.line) out.push(`${gutter('')} ${' '.repeat(Math.max(0, at.column - 1))}^`);
  }
  return out.map((l) => `    ${l}`).join('\n');
}
