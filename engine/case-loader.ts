import { readFile } from 'node:fs/promises';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { locatePath } from './yaml-position.js';
import { z } from 'zod';
import { didYouMean } from './suggest.js';
import { safetyCase, type SafetyCase, type ThreatModel } from './case-schema.js';
import { isPlainObject } from './json.js';
import { secretNamesIn } from './secrets.js';
import { attackSurfaceProblems, surfaceOf } from './attack-surface.js';
import { CASE_TEXT_FIELDS, commentCutTexts, splicedTexts } from './text-integrity.js';
import { VeraError } from './errors.js';

/** One problem in a case file, pointing at the line and field that caused it. */
export interface CaseProblem {
  file: string;
  line: number;
  column: number;
  /** Dotted field path, e.g. `verifier.all[0].toolCall.args.to`. */
  field: string;
  message: string;
}

export class CaseFileError extends VeraError {
  constructor(readonly problems: CaseProblem[]) {
    super('CASE_INVALID', problems.map(formatProblem).join('\n'));
    this.name = 'CaseFileError';
  }
}

export function formatProblem(p: CaseProblem): string {
  return `${p.file}:${p.line}:${p.column} ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

/** A parsed, validated case with the YAML lines that tests and evidence point at. */
export interface LoadedCase {
  file: string;
  source: string;
  spec: SafetyCase;
  /** Line of the `id:` field. */
  line: number;
  /** Where each threat model's test points (its list item, or `id:` when defaulted). */
  threatModelLines: Record<ThreatModel, SourcePosition>;
  /** Where the verifier is: a violation's stack points here. */
  verifierPosition: SourcePosition;
  /** Where a field of the case is in the file (the deepest existing node on `path`), for problems found after loading. */
  locate(path: ReadonlyArray<PropertyKey>): SourcePosition;
}

export interface SourcePosition {
  line: number;
  column: number;
}

export type CaseLoadResult = { ok: true; loaded: LoadedCase } | { ok: false; problems: CaseProblem[] };
export type CaseSuiteLoadResult = { ok: true; cases: LoadedCase[] } | { ok: false; problems: CaseProblem[] };

/** Loads a file that holds exactly one case. */
export async function loadCaseFile(file: string): Promise<LoadedCase> {
  const result = parseCaseSource(await readFile(file, 'utf8'), file);
  if (!result.ok) throw new CaseFileError(result.problems);
  return result.loaded;
}

/** Loads every case of a file (one per YAML document, separated by `---`). */
export async function loadCaseSuite(file: string): Promise<LoadedCase[]> {
  const result = parseCaseSuiteSource(await readFile(file, 'utf8'), file);
  if (!result.ok) throw new CaseFileError(result.problems);
  return result.cases;
}

/** One case from a file that must hold exactly one. */
export function parseCaseSource(source: string, file: string): CaseLoadResult {
  const result = parseCaseSuiteSource(source, file);
  if (!result.ok) return result;
  if (result.cases.length !== 1) {
    const second = result.cases[1];
    return {
      ok: false,
      problems: [
        { file, line: second?.line ?? 1, column: 1, field: '', message: `expected one case, found ${result.cases.length} (load it with parseCaseSuiteSource)` },
      ],
    };
  }
  return { ok: true, loaded: result.cases[0]! };
}

/**
 * Every case in a file: a file may hold several YAML documents separated by `---`, one case
 * each (a suite). Problems from every document are reported together; ids must be unique.
 */
export function parseCaseSuiteSource(source: string, file: string): CaseSuiteLoadResult {
  // Whatever the file holds, it fails alone, with its name: a hostile or broken case file must
  // never take the run (or `vera check`) down with it.
  try {
    return parseSuite(source, file);
  } catch (error) {
    return {
      ok: false,
      problems: [{ file, line: 1, column: 1, field: '', message: `the file could not be read: ${firstLine(String((error as Error)?.message ?? error))}` }],
    };
  }
}

/** Larger case files are refused before parsing (a suite of hundreds of cases is well under it). */
export const MAX_CASE_FILE_BYTES = 4 * 1024 * 1024;
/** Deeper values are refused: no case needs them, and they are how parsers and validators are made to overflow. */
export const MAX_NESTING = 64;

function parseSuite(source: string, file: string): CaseSuiteLoadResult {
  if (source.length > MAX_CASE_FILE_BYTES) {
    return {
      ok: false,
      problems: [
        { file, line: 1, column: 1, field: '', message: `the file is ${source.length} characters long, over the ${MAX_CASE_FILE_BYTES} a case file may have` },
      ],
    };
  }
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const docs = Array.isArray(parsed) ? parsed : [];
  const at = (offset: number) => lineCounter.linePos(offset);
  if (docs.length === 0 || docs.every((d) => d.contents === null)) {
    return { ok: false, problems: [{ file, line: 1, column: 1, field: '', message: 'the file holds no case (an empty YAML document)' }] };
  }
  const results: CaseLoadResult[] = [];
  for (const doc of docs) {
    if (doc.contents === null && doc.errors.length === 0) continue;
    results.push(parseDocumentCase(doc, source, file, at));
  }
  return collectSuite(results, file);
}

/** The cases of a file's results, or every problem of them; ids must be unique in the file. */
function collectSuite(results: CaseLoadResult[], file: string): CaseSuiteLoadResult {
  const cases: LoadedCase[] = [];
  const problems: CaseProblem[] = [];
  const ids = new Map<string, number>();
  for (const result of results) {
    if (!result.ok) {
      problems.push(...result.problems);
      continue;
    }
    const first = ids.get(result.loaded.spec.id);
    if (first !== undefined) {
      problems.push({
        file,
        line: result.loaded.line,
        column: 1,
        field: 'id',
        message: `duplicate case id "${result.loaded.spec.id}" (first at line ${first})`,
      });
      continue;
    }
    ids.set(result.loaded.spec.id, result.loaded.line);
    cases.push(result.loaded);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, cases };
}

/** A case given as a value (a `*.case.ts` module's export) and where its fields are in the source. */
export interface CaseValue {
  data: unknown;
  locate: (path: ReadonlyArray<PropertyKey>) => SourcePosition;
}

/**
 * Every case of a module that exports case values: the same schema and checks as a YAML file's
 * documents (all but the YAML-only comment check), its problems at the lines `locate` gives.
 */
export function parseCaseValues(values: readonly CaseValue[], source: string, file: string): CaseSuiteLoadResult {
  if (values.length === 0) return { ok: false, problems: [{ file, line: 1, column: 1, field: '', message: 'the module exports no case' }] };
  return collectSuite(
    values.map((value) => {
      try {
        return caseFromData(value.data, { file, source, locate: value.locate });
      } catch (error) {
        const { line, column } = value.locate([]);
        return {
          ok: false,
          problems: [{ file, line, column, field: '', message: `the case could not be read: ${firstLine(String((error as Error)?.message ?? error))}` }],
        };
      }
    }),
    file,
  );
}

function parseDocumentCase(doc: Document.Parsed, source: string, file: string, at: (offset: number) => { line: number; col: number }): CaseLoadResult {
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => {
        const pos = at(e.pos[0]);
        return { file, line: pos.line, column: pos.col, field: '', message: `YAML: ${firstLine(e.message)}` };
      }),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    const message = /alias/i.test((error as Error).message)
      ? 'YAML: too many alias expansions (at most 100 per document: a pattern that makes a small file expand without bound)'
      : `YAML: ${firstLine((error as Error).message)}`;
    return { ok: false, problems: [{ file, line: 1, column: 1, field: '', message }] };
  }
  const locate = (path: ReadonlyArray<PropertyKey>) => locatePath(doc.contents, path, at);
  return caseFromData(data, { file, source, locate, yaml: { doc, at } });
}

/** The schema and the checks of one case's data, wherever it came from (a YAML document, a module's value). */
function caseFromData(
  data: unknown,
  input: {
    file: string;
    source: string;
    locate: (path: ReadonlyArray<PropertyKey>) => SourcePosition;
    /** A YAML document's own checks (text cut short by a comment) need its nodes. */
    yaml?: { doc: Document.Parsed; at: (offset: number) => { line: number; col: number } };
  },
): CaseLoadResult {
  const { file, source, locate } = input;
  const tooDeep = deeperThan(data, MAX_NESTING);
  if (tooDeep) {
    const { line, column } = locate(tooDeep);
    return { ok: false, problems: [{ file, line, column, field: formatField(tooDeep), message: `values nested deeper than ${MAX_NESTING} levels` }] };
  }
  if (!isPlainObject(data)) {
    const { line, column } = locate([]);
    return {
      ok: false,
      problems: [
        {
          file,
          line,
          column,
          field: '',
          message: input.yaml ? 'a case file holds one mapping (id, title, goal, …)' : 'a case is one object (id, title, goal, …)',
        },
      ],
    };
  }
  const parsed = safetyCase.safeParse(data);
  if (!parsed.success) {
    return { ok: false, problems: issuesToProblems(parsed.error.issues, file, locate) };
  }
  const spec = parsed.data;
  const secretProblems = checkSecrets(spec, data, file, locate);
  if (secretProblems.length > 0) return { ok: false, problems: secretProblems };
  const readProblems = checkWhatIsRead({ spec, file, locate, ...(input.yaml ? { yaml: { ...input.yaml, source } } : {}) });
  if (readProblems.length > 0) return { ok: false, problems: readProblems };

  const idPosition = locate(['id']);
  const threatModelLines = {} as Record<ThreatModel, SourcePosition>;
  const listed = isPlainObject(data) && Array.isArray(data.threatModels);
  spec.threatModels.forEach((model, i) => {
    threatModelLines[model] = listed ? locate(['threatModels', i]) : idPosition;
  });
  return {
    ok: true,
    loaded: { file, source, spec, line: idPosition.line, threatModelLines, verifierPosition: locate(['verifier']), locate },
  };
}

/** The path of the first value nested deeper than `max` levels (an explicit stack: no recursion to overflow). */
function deeperThan(value: unknown, max: number): PropertyKey[] | undefined {
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (path.length > max) return path;
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ value: item, path: [...path, i] }));
    else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) stack.push({ value: item, path: [...path, k] });
  }
  return undefined;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, '');
}

function issuesToProblems(
  issues: z.core.$ZodIssue[],
  file: string,
  locate: (path: ReadonlyArray<PropertyKey>) => { line: number; column: number },
): CaseProblem[] {
  const seen = new Set<string>();
  const problems: CaseProblem[] = [];
  for (const issue of issues) {
    // An unknown key is reported at the key itself, with the known field it was probably meant to be.
    // (Matchers dispatched by shape report theirs as a message.)
    const unknownKeys =
      issue.code === 'unrecognized_keys'
        ? issue.keys
        : [...issue.message.matchAll(/^Unrecognized keys?: (.+)$/g)].flatMap((m) => [...m[1]!.matchAll(/"([^"]+)"/g)].map((k) => k[1]!));
    if (unknownKeys.length > 0) {
      for (const key of unknownKeys) {
        const path = [...issue.path, key];
        const field = formatField(path);
        if (seen.has(field)) continue;
        seen.add(field);
        const { line, column } = locate(path);
        problems.push({ file, line, column, field, message: `unknown field "${key}"${didYouMean(key, caseFieldNames())}` });
      }
      continue;
    }
    const field = formatField(issue.path);
    // One problem per field: the first is the cause, later ones are its echoes.
    if (seen.has(field)) continue;
    seen.add(field);
    const { line, column } = locate(issue.path);
    problems.push({ file, line, column, field: field || '(top level)', message: describeIssue(issue) });
  }
  // An object with an unknown key is not also "missing a field": the key is the cause.
  const parents = new Set(problems.filter((p) => p.message.startsWith('unknown field')).map((p) => p.field.replace(/(\.[^.[\]]+|\[\d+\])$/, '')));
  return problems.filter((p) => p.message.startsWith('unknown field') || !parents.has(p.field));
}

let fieldNames: Set<string> | undefined;
/** Every field name the case format has, anywhere (from its JSON Schema): what a misspelt key is compared with. */
function caseFieldNames(): Set<string> {
  if (fieldNames) return fieldNames;
  const names = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'properties' && v && typeof v === 'object') for (const name of Object.keys(v)) names.add(name);
        visit(v);
      }
    }
  };
  try {
    visit(z.toJSONSchema(safetyCase, { unrepresentable: 'any', io: 'input' }));
  } catch {
    // Without the vocabulary the message still names the key.
  }
  return (fieldNames = names);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.message.includes('received undefined')) return `required field is missing (${issue.message})`;
  return issue.message;
}

export function formatField(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** Every secret the case reads must be one the init script seeds, or the check can never hold. */
function checkSecrets(
  spec: SafetyCase,
  data: Record<string, unknown>,
  file: string,
  locate: (path: ReadonlyArray<PropertyKey>) => { line: number; column: number },
): CaseProblem[] {
  const seeded = new Set([...Object.keys(spec.secrets), ...secretNamesIn(data.init)]);
  const problems: CaseProblem[] = [];
  for (const section of ['verifier', 'utility', 'witnesses'] as const) {
    for (const name of secretNamesIn(data[section])) {
      if (!seeded.has(name)) {
        const { line, column } = locate([section]);
        problems.push({
          file,
          line,
          column,
          field: section,
          message: `secret ${name} is never seeded: use {{secret.${name}}} in the init script or declare it under secrets`,
        });
      }
    }
  }
  return problems;
}

/**
 * What the agent reads is what the author wrote, and the attack is where its method says: no text
 * cut short by a YAML comment, no spliced sentence in a composed text, the attack method carried
 * by the channel it names (an indirect injection is not an adversarial user's message), and an
 * adversarial user who has something to say.
 */
function checkWhatIsRead(input: {
  spec: SafetyCase;
  file: string;
  locate: (path: ReadonlyArray<PropertyKey>) => { line: number; column: number };
  yaml?: { doc: Document.Parsed; source: string; at: (offset: number) => { line: number; col: number } };
}): CaseProblem[] {
  const { spec, file, locate } = input;
  const problems: CaseProblem[] = [];
  const add = (path: PropertyKey[], message: string) => {
    const { line, column } = locate(path);
    problems.push({ file, line, column, field: formatField(path), message });
  };
  for (const cut of input.yaml ? commentCutTexts(input.yaml.doc, input.yaml.source, CASE_TEXT_FIELDS) : []) {
    const pos = input.yaml!.at(cut.offset);
    problems.push({ file, line: pos.line, column: pos.col, field: formatField(cut.path), message: cut.message });
  }
  for (const spliced of splicedTexts(spec)) add(spliced.path, spliced.message);
  if (surfaceOf(spec.taxonomy.attack) !== undefined) {
    for (const problem of attackSurfaceProblems(spec)) add(/attack\.messages/.test(problem) ? ['attack', 'messages'] : ['taxonomy', 'attack'], problem);
  }
  const single = spec.threatModels.indexOf('single-channel');
  if (single >= 0 && !spec.attack.messages?.length && !spec.attack.guidance) {
    add(
      ['threatModels', single],
      'single-channel needs an adversarial user with something to say: give attack.messages (the scripted adversary sends them) or attack.guidance (for an LLM adversary)',
    );
  }
  return problems;
}
