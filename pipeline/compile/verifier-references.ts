import type { SafetyCase } from '../../engine/case-schema.js';
import { isPlainObject, type JsonObject } from '../../engine/json.js';
import { entriesOf, parsePath, resolvePath, type PathSegment } from '../../engine/paths.js';
import type { Predicate, ToolCallMatcher, ValueMatcher } from '../../engine/predicate-schema.js';
import { casePattern } from '../../engine/case-pattern.js';

/**
 * Does everything a generated case names exist? A model can write a verifier that is valid data
 * but checks a tool that is not mounted, an argument the tool does not take, or a state path that
 * can never resolve — such a verifier would say "safe" forever. The rule, precisely:
 *
 * Tools — every tool a `toolCall`/`sequence` step, an injection rule or a witness names exactly
 * must be a tool of a mounted environment; a tool given as a matcher (`matches`, `equals`,
 * `oneOf`, `contains`) must match at least one. For an exact tool, the first segment of every
 * `args` (and injection `when`) path must be a property of that tool's input schema.
 *
 * Channels — an `egress.channel` must be an external channel of a mounted environment.
 *
 * State paths — a `state.path` is accepted when
 *   (a) it resolves (names at least one place) in the initial snapshot (after the init script) or
 *       in the final snapshot of the violating witness; or
 *   (b) it is a plausible item of a collection: its longest prefix that resolves (at least
 *       `<environment>.<field>`) names a collection — an array, or an object that is not an array
 *       item and whose values are all objects or all of one scalar type (a map such as
 *       `files.files` or a repository's `files`) — the next segment selects items of it (an index,
 *       filter or `*` for arrays; a key, filter or `*` for maps), and the rest of the path
 *       resolves in at least one existing item (or there is no rest, or the collection is empty,
 *       so no item shape is known yet).
 *   A collection matcher's `where` fields must exist on at least one item of that collection
 *   when it has items. `fromInitial` operands read the initial snapshot, so they must resolve
 *   there (rule (a) on the initial snapshot only).
 *
 * Custom (code) checks are refused: generated verifiers are data only.
 */
export interface ReferenceContext {
  /** Tools of the mounted environments: name → input JSON schema. */
  tools: Map<string, Record<string, unknown>>;
  /** External channels of the mounted environments. */
  channels: Set<string>;
  initial: JsonObject;
  /** Final snapshot after the violating witness. */
  violating: JsonObject;
  /**
   * Every text of the case a route to the harm could take a name from — init arguments, task,
   * attack, witnesses' calls. Default: read from the case.
   */
  mentioned?: readonly string[];
}

export function checkReferences(spec: SafetyCase, given: ReferenceContext): string[] {
  const ctx = { ...given, mentioned: given.mentioned ?? caseTexts(spec) };
  const problems: string[] = [];
  const checkPredicate = (p: Predicate, at: string) => walkPredicate(p, at, ctx, problems);
  checkPredicate(spec.verifier, 'verifier');
  if (spec.utility) checkPredicate(spec.utility, 'utility');
  spec.attack.injections.forEach((rule, i) => {
    const at = `attack.injections[${i}]`;
    if (!ctx.tools.has(rule.tool)) problems.push(`${at}.tool: "${rule.tool}" is not a tool of the mounted environments (${toolList(ctx)})`);
    else checkArgKeys(rule.tool, Object.keys(rule.when ?? {}), `${at}.when`, ctx, problems);
  });
  for (const kind of ['violating', 'safe'] as const) {
    spec.witnesses[kind].calls.forEach((call, i) => {
      if (!ctx.tools.has(call.tool))
        problems.push(`witnesses.${kind}.calls[${i}].tool: "${call.tool}" is not a tool of the mounted environments (${toolList(ctx)})`);
    });
  }
  return problems;
}

function walkPredicate(p: Predicate, at: string, ctx: ReferenceContext, problems: string[]): void {
  if ('all' in p) p.all.forEach((c, i) => walkPredicate(c, `${at}.all[${i}]`, ctx, problems));
  else if ('any' in p) p.any.forEach((c, i) => walkPredicate(c, `${at}.any[${i}]`, ctx, problems));
  else if ('not' in p) walkPredicate(p.not, `${at}.not`, ctx, problems);
  else if ('toolCall' in p) checkToolCall(p.toolCall, `${at}.toolCall`, ctx, problems);
  else if ('sequence' in p) p.sequence.forEach((m, i) => checkToolCall(m, `${at}.sequence[${i}]`, ctx, problems));
  else if ('state' in p) {
    const problem =
      statePathProblem(p.state.path, [ctx.initial, ctx.violating]) ?? unnamedItemProblem(p.state.path, [ctx.initial, ctx.violating], ctx.mentioned ?? []);
    if (problem) problems.push(`${at}.state.path: ${problem}`);
    else if (p.state.where) checkWhereFields(p.state.path, Object.keys(p.state.where), `${at}.state.where`, ctx, problems);
  } else if ('egress' in p) {
    if (p.egress.channel !== undefined && !ctx.channels.has(p.egress.channel)) {
      problems.push(
        `${at}.egress.channel: "${p.egress.channel}" is not an external channel of the mounted environments (${[...ctx.channels].join(', ') || 'none'})`,
      );
    }
  } else if ('custom' in p) problems.push(`${at}.custom: generated cases cannot use custom (code) checks; write the check as predicate data`);
  for (const path of fromInitialPaths(p)) {
    if (resolvePath(ctx.initial, path).length === 0) problems.push(`${at}: fromInitial "${path}" names nothing in the initial snapshot`);
  }
}

function checkToolCall(m: ToolCallMatcher, at: string, ctx: ReferenceContext, problems: string[]): void {
  if (typeof m.tool === 'string') {
    if (!ctx.tools.has(m.tool)) {
      problems.push(`${at}.tool: "${m.tool}" is not a tool of the mounted environments (${toolList(ctx)})`);
      return;
    }
    checkArgKeys(m.tool, Object.keys(m.args ?? {}), `${at}.args`, ctx, problems);
    return;
  }
  const names = [...ctx.tools.keys()];
  if (!names.some((name) => toolMatcherAccepts(m.tool as ValueMatcher, name)))
    problems.push(`${at}.tool: the matcher matches none of the mounted tools (${toolList(ctx)})`);
}

function toolMatcherAccepts(matcher: ValueMatcher, name: string): boolean {
  const same = (v: unknown) => (typeof v === 'string' ? (matcher.ignoreCase ? v.toLowerCase() === name.toLowerCase() : v === name) : false);
  if (matcher.matches !== undefined && !casePattern(matcher.matches, matcher.ignoreCase).test(name)) return false;
  if (matcher.equals !== undefined && !same(matcher.equals)) return false;
  if (matcher.oneOf !== undefined && !matcher.oneOf.some(same)) return false;
  if (
    typeof matcher.contains === 'string' &&
    !(matcher.ignoreCase ? name.toLowerCase().includes(matcher.contains.toLowerCase()) : name.includes(matcher.contains))
  )
    return false;
  return true;
}

function checkArgKeys(tool: string, keys: string[], at: string, ctx: ReferenceContext, problems: string[]): void {
  const properties = ctx.tools.get(tool)?.properties;
  if (!isPlainObject(properties)) return;
  for (const key of keys) {
    const first = parsePath(key)[0];
    if (first?.kind === 'key' && !Object.hasOwn(properties, first.key)) {
      problems.push(`${at}: "${key}" — ${tool} takes no argument "${first.key}" (it takes ${Object.keys(properties).join(', ') || 'none'})`);
    }
  }
}

function checkWhereFields(path: string, keys: string[], at: string, ctx: ReferenceContext, problems: string[]): void {
  const items = [ctx.initial, ctx.violating].flatMap((s) => resolvePath(s, path)).flatMap((m) => entriesOf(m.value).map(([, v]) => v));
  if (items.length === 0) return;
  for (const key of keys) {
    const first = parsePath(key)[0];
    if (first?.kind !== 'key') continue;
    if (!items.some((item) => isPlainObject(item) && Object.hasOwn(item, first.key))) {
      problems.push(`${at}: no item of ${path} has a field "${first.key}"`);
    }
  }
}

/** Why a state path is not acceptable under rules (a) and (b), or undefined when it is. */
export function statePathProblem(path: string, snapshots: JsonObject[]): string | undefined {
  if (snapshots.some((s) => resolvePath(s, path).length > 0)) return undefined;
  const segments = parsePath(path);
  for (const snapshot of snapshots) {
    // The longest prefix that resolves, of at least two segments (`<environment>.<field>`).
    for (let k = segments.length - 1; k >= 2; k--) {
      const matches = resolvePath(snapshot, formatPath(segments.slice(0, k)));
      if (matches.length === 0) continue;
      const selector = segments[k]!;
      const rest = formatPath(segments.slice(k + 1));
      for (const m of matches) {
        const array = Array.isArray(m.value);
        if (!array && !isMap(m.value, m.path)) continue;
        if (array ? selector.kind === 'key' && !/^\d+$/.test(selector.key) : selector.kind === 'index') continue;
        const items = entriesOf(m.value).map(([, v]) => v);
        if (items.length === 0 || rest === '' || items.some((item) => resolvePath(item, rest).length > 0)) return undefined;
      }
      break;
    }
  }
  return `"${path}" names nothing in the initial snapshot or after the violating witness, and is not an item of a collection there`;
}

/**
 * A path that selects an item by id, key or field value (`email.inbox[id="m-9"]`, `files.files["/x"]`)
 * which is in neither snapshot is accepted above as an item some route may yet create — unless
 * nothing in the case names it: then no route can (an agent creates what it was told of), and the
 * check can never hold; inside an `any` it is a dead branch the witnesses never notice.
 */
export function unnamedItemProblem(path: string, snapshots: JsonObject[], mentioned: readonly string[]): string | undefined {
  if (snapshots.some((s) => resolvePath(s, path).length > 0)) return undefined;
  const segments = parsePath(path);
  for (let k = 2; k < segments.length; k++) {
    const prefix = formatPath(segments.slice(0, k + 1));
    if (snapshots.some((s) => resolvePath(s, prefix).length > 0)) continue;
    const selector = segments[k]!;
    const name = selector.kind === 'filter' ? selector.value : selector.kind === 'key' && !/^\d+$/.test(selector.key) ? selector.key : undefined;
    if (name === undefined) return undefined;
    const lower = name.toLowerCase();
    if (mentioned.some((text) => text.toLowerCase().includes(lower))) return undefined;
    return `"${path}" selects ${JSON.stringify(name)}, which is in neither the initial snapshot nor the one after the violating witness, and nothing in the case (init, task, attack, witnesses) names it — no route can create it, so this check never holds`;
  }
  return undefined;
}

/** The case's texts a route could take a name from. */
function caseTexts(spec: SafetyCase): string[] {
  const out: string[] = [spec.task];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (isPlainObject(value)) Object.values(value).forEach(walk);
  };
  walk(spec.init);
  walk(spec.attack);
  walk(spec.witnesses);
  return out;
}

/** An object used as a map: not an array item, and its values all objects or all one scalar type. */
function isMap(value: unknown, canonicalPath: string): boolean {
  if (!isPlainObject(value) || /\[\d+\]$/.test(canonicalPath)) return false;
  const values = Object.values(value);
  if (values.length === 0) return true;
  if (values.every((v) => isPlainObject(v))) return true;
  const type = typeof values[0];
  return type !== 'object' && values.every((v) => typeof v === type);
}

export function formatPath(segments: PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (s.kind === 'key') out += /^[A-Za-z0-9_$@-]+$/.test(s.key) ? `${out ? '.' : ''}${s.key}` : `[${JSON.stringify(s.key)}]`;
    else if (s.kind === 'index') out += `[${s.index}]`;
    else if (s.kind === 'wildcard') out += `${out ? '.' : ''}*`;
    else out += `[${s.field}=${JSON.stringify(s.value)}]`;
  }
  return out;
}

/** Every `{ fromInitial: path }` operand inside one predicate node (not its child predicates). */
function fromInitialPaths(p: Predicate): string[] {
  const out: string[] = [];
  const visit = (value: unknown, top: boolean) => {
    if (Array.isArray(value)) value.forEach((v) => visit(v, false));
    else if (isPlainObject(value)) {
      if (typeof value.fromInitial === 'string' && Object.keys(value).length === 1) out.push(value.fromInitial);
      for (const [k, v] of Object.entries(value)) {
        if (top && (k === 'all' || k === 'any' || k === 'not')) continue;
        visit(v, false);
      }
    }
  };
  visit(p, true);
  return out;
}

function toolList(ctx: ReferenceContext): string {
  return [...ctx.tools.keys()].join(', ');
}
