import { readFile } from 'node:fs/promises';
import { isPlainObject } from '../engine/json.js';
import { parseCaseValues, type CaseSuiteLoadResult, type SourcePosition } from '../engine/case-loader.js';

/** The id a `*.case.ts` module is evaluated under (its own code); the plain id is the generated test module. */
export const CASE_SOURCE_QUERY = 'vera-case-source';

export const CASE_MODULE_FILE = /\.case\.[cm]?[jt]s$/;

/** A node of the ESTree the parser gives, as far as locating a field needs it. */
interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/**
 * Loads the cases a `*.case.ts` module exports (`export default defineCase({…})`, or an array of
 * them): the module is evaluated by `importModule` (Vite's module runner: the user's imports and
 * TypeScript work as in a test), each value goes through the same schema and checks as a YAML
 * document, and a problem points at the line of the field in the module's source — found in its
 * syntax tree, through object and array literals and top-level `const`s. A value built where the
 * tree cannot follow (a function's result) points at the nearest literal that holds it.
 */
export async function loadCaseModule(
  file: string,
  importModule: (id: string) => Promise<Record<string, unknown>>,
  /** The file's name in problems and records (default: its path). */
  name = file,
): Promise<CaseSuiteLoadResult> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    return { ok: false, problems: [{ file: name, line: 1, column: 1, field: '', message: `the file could not be read: ${(error as Error).message}` }] };
  }
  // Vite 8's parser reads TypeScript; with an older Vite, problems name their field at line 1.
  const vite = (await import('vite')) as { parseSync?: (file: string, source: string, options: { lang: 'ts' | 'js' }) => { program: unknown } };
  const tree = new CaseSourceTree(file, source, vite.parseSync);
  let exported: unknown;
  try {
    exported = (await importModule(`${file}?${CASE_SOURCE_QUERY}`)).default;
  } catch (error) {
    const at = tree.positionInStack(error) ?? { line: 1, column: 1 };
    const message = String((error as Error)?.message ?? error).split('\n')[0];
    return { ok: false, problems: [{ file: name, ...at, field: '', message: `the module threw while loading: ${message}` }] };
  }
  if (exported === undefined) {
    return {
      ok: false,
      problems: [
        {
          file,
          line: 1,
          column: 1,
          field: '',
          message: 'a case module exports its cases as default: `export default defineCase({ … })` (or an array of them)',
        },
      ],
    };
  }
  const values = Array.isArray(exported) ? exported : [exported];
  return parseCaseValues(
    values.map((data, i) => ({ data, locate: (path) => tree.locate(tree.caseNode(data, i, values.length), path) })),
    source,
    name,
  );
}

/**
 * A case module evaluated outside a Vitest run (`vera check`): a module runner of its own, on a
 * Vite server without the project's plugins (a case module is data and its helpers).
 */
export async function importCaseModuleStandalone(id: string, root: string): Promise<Record<string, unknown>> {
  const { runnerImport } = await import('vite');
  const { module } = await runnerImport<Record<string, unknown>>(id, { root, configFile: false, logLevel: 'silent' });
  return module;
}

/** A module's syntax tree, and the positions of the case values in it. */
class CaseSourceTree {
  private readonly lineStarts: number[] = [0];
  private readonly program: AstNode | undefined;
  private readonly consts = new Map<string, AstNode>();
  private caseLiterals: AstNode[] | undefined;

  constructor(
    private readonly file: string,
    source: string,
    parse: ((file: string, source: string, options: { lang: 'ts' | 'js' }) => { program: unknown }) | undefined,
  ) {
    for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    try {
      const parsed = parse?.(file, source, { lang: /\.[cm]?ts$/.test(file) ? 'ts' : 'js' });
      this.program = parsed?.program as AstNode | undefined;
    } catch {
      // No tree: every problem points at the file's first line; the module's own error says more.
    }
    for (const statement of this.body(this.program)) {
      const declaration = statement.type === 'ExportNamedDeclaration' ? (statement.declaration as AstNode | null) : statement;
      if (declaration?.type !== 'VariableDeclaration') continue;
      for (const d of declaration.declarations as AstNode[]) {
        const id = d.id as AstNode;
        if (id.type === 'Identifier' && d.init) this.consts.set(id.name as string, d.init as AstNode);
      }
    }
  }

  position(offset: number): SourcePosition {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.lineStarts[lo]! + 1 };
  }

  /** The object literal of the `index`-th case value: the literal whose `id` is the value's, else the export's. */
  caseNode(value: unknown, index: number, count: number): AstNode | undefined {
    const literals = this.literalsOfCases();
    const id = isPlainObject(value) ? value.id : undefined;
    const byId = literals.find((node) => {
      const property = this.property(node, 'id');
      const literal = property && this.unwrap(property.value as AstNode);
      return literal?.type === 'Literal' && literal.value === id;
    });
    if (byId) return byId;
    // Several values from one literal (a loop over `defineCase`): that literal is where they are written.
    if (literals.length === 1) return literals[0];
    if (literals.length === count) return literals[index];
    return this.exportDefault();
  }

  /** The deepest node on `path` the tree can follow from `node`, as a position (a key where there is one). */
  locate(node: AstNode | undefined, path: ReadonlyArray<PropertyKey>): SourcePosition {
    let current = node && this.unwrap(node);
    let best = current ?? this.exportDefault();
    for (const part of path) {
      if (!current) break;
      if (typeof part === 'number' && current.type === 'ArrayExpression') {
        const element = (current.elements as Array<AstNode | null>)[part];
        if (!element || element.type === 'SpreadElement') break;
        best = element;
        current = this.unwrap(element);
        continue;
      }
      if (typeof part === 'string' && current.type === 'ObjectExpression') {
        const property = this.property(current, part);
        if (!property) break;
        best = property.key as AstNode;
        current = this.unwrap(property.value as AstNode);
        continue;
      }
      break;
    }
    return best ? this.position(best.start) : { line: 1, column: 1 };
  }

  /** Where the module's own code threw, from a stack frame naming this file. */
  positionInStack(error: unknown): SourcePosition | undefined {
    const stack = String((error as Error)?.stack ?? '');
    const escaped = this.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const match = new RegExp(`${escaped}(?:\\?[^:]*)?:(\\d+):(\\d+)`).exec(stack);
    return match ? { line: Number(match[1]), column: Number(match[2]) } : undefined;
  }

  private exportDefault(): AstNode | undefined {
    return this.body(this.program).find((s) => s.type === 'ExportDefaultDeclaration');
  }

  /** Object literals given to `defineCase(…)` or exported as cases (directly, or as an array's items). */
  private literalsOfCases(): AstNode[] {
    if (this.caseLiterals) return this.caseLiterals;
    const found: AstNode[] = [];
    const visit = (node: unknown) => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!node || typeof node !== 'object') return;
      const n = node as AstNode;
      if (n.type === 'CallExpression' && (n.callee as AstNode).type === 'Identifier' && (n.callee as AstNode).name === 'defineCase') {
        const argument = (n.arguments as AstNode[])[0];
        const literal = argument && this.unwrap(argument);
        if (literal?.type === 'ObjectExpression') found.push(literal);
      }
      for (const [key, child] of Object.entries(n)) if (key !== 'type' && child && typeof child === 'object') visit(child);
    };
    visit(this.program);
    if (found.length === 0) {
      const exported = this.exportDefault();
      const value = exported && this.unwrap(exported.declaration as AstNode);
      if (value?.type === 'ObjectExpression') found.push(value);
      if (value?.type === 'ArrayExpression')
        for (const e of value.elements as Array<AstNode | null>) if (e && this.unwrap(e)?.type === 'ObjectExpression') found.push(this.unwrap(e)!);
    }
    return (this.caseLiterals = found);
  }

  /** An object literal's property of that name (its key and value). */
  private property(node: AstNode, name: string): AstNode | undefined {
    return (node.properties as AstNode[]).find((p) => p.type === 'Property' && this.keyName(p) === name);
  }

  private keyName(property: AstNode): string | undefined {
    const key = property.key as AstNode;
    if (property.computed) return key.type === 'Literal' ? String(key.value) : undefined;
    return key.type === 'Identifier' ? (key.name as string) : key.type === 'Literal' ? String(key.value) : undefined;
  }

  /** Through what does not change a value: `as`/`satisfies`, parentheses, `defineCase(…)`, a top-level `const`'s name. */
  private unwrap(node: AstNode, seen = new Set<string>()): AstNode | undefined {
    let current: AstNode | undefined = node;
    for (let i = 0; current && i < 32; i++) {
      if (['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'ParenthesizedExpression', 'TSTypeAssertion'].includes(current.type)) {
        current = current.expression as AstNode;
      } else if (current.type === 'ExportDefaultDeclaration') {
        current = current.declaration as AstNode;
      } else if (current.type === 'CallExpression' && (current.callee as AstNode).type === 'Identifier' && (current.callee as AstNode).name === 'defineCase') {
        current = (current.arguments as AstNode[])[0];
      } else if (current.type === 'Identifier' && this.consts.has(current.name as string) && !seen.has(current.name as string)) {
        seen.add(current.name as string);
        current = this.consts.get(current.name as string);
      } else return current;
    }
    return current;
  }

  private body(program: AstNode | undefined): AstNode[] {
    return (program?.body as AstNode[] | undefined) ?? [];
  }
}
