import type { z } from 'zod';
import type { SafetyCase } from '../engine/case-schema.js';
import { isPlainObject } from '../engine/json.js';
import { parsePath } from '../engine/paths.js';
import { didYouMean } from '../engine/suggest.js';
import type { AnyEnvironmentDefinition, AnyToolSpec } from '../sandbox/environment.js';

/**
 * What a case names that its environments must have, checked where it is written: the tools its
 * injections, descriptions, witnesses and plan call (a `read_mail` for `read_email` loaded,
 * passed every gate and made every run N/A), the arguments they are given (a misspelt witness
 * argument was silently dropped, and the witness "said safe"), the keys an injection's `when`
 * compares, and the arguments of init operations (`createdAt`, `colour: red` were accepted and
 * ignored). Each problem names the field and, where a near name exists, the one meant.
 */

export interface ReferenceProblem {
  path: PropertyKey[];
  message: string;
}

/**
 * Keys of `input` that `schema` dropped (zod's objects strip what they do not know): the keys the
 * operation or tool never reads. Compared with the parsed output, level by level.
 */
export function unknownKeys(input: unknown, parsed: unknown, path: PropertyKey[] = []): Array<{ path: PropertyKey[]; key: string; known: string[] }> {
  const out: Array<{ path: PropertyKey[]; key: string; known: string[] }> = [];
  if (isPlainObject(input) && isPlainObject(parsed)) {
    for (const [k, v] of Object.entries(input)) {
      if (!(k in parsed)) out.push({ path: [...path, k], key: k, known: Object.keys(parsed) });
      else out.push(...unknownKeys(v, parsed[k], [...path, k]));
    }
  } else if (Array.isArray(input) && Array.isArray(parsed) && input.length === parsed.length) {
    input.forEach((v, i) => out.push(...unknownKeys(v, parsed[i], [...path, i])));
  }
  return out;
}

/** The argument names a tool's input schema declares (its zod object's shape). */
function argumentNames(tool: AnyToolSpec): string[] {
  const shape = (tool.input as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Problems of one call's arguments against its tool: keys it does not take (said first: a misspelt key is also a missing one), then what its schema refuses. */
function argumentProblems(tool: AnyToolSpec, args: Record<string, unknown>, at: PropertyKey[]): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const names = argumentNames(tool);
  const unknownTop = names.length > 0 ? Object.keys(args).filter((k) => !names.includes(k)) : [];
  for (const key of unknownTop) {
    problems.push({
      path: [...at, 'args', key],
      message: `${tool.name} has no argument "${key}" (it takes: ${names.join(', ') || 'none'})${didYouMean(key, names)}`,
    });
  }
  const parsed = (tool.input as z.ZodType).safeParse(args);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const missing = issue.path.length > 0 && valueAt(args, issue.path) === undefined;
      problems.push({
        path: [...at, 'args', ...issue.path],
        message: missing ? `${tool.name}: the argument "${issue.path.join('.')}" is missing` : `${tool.name}: ${issue.message}`,
      });
    }
    return problems;
  }
  for (const u of unknownKeys(args, parsed.data)) {
    if (u.path.length === 1 && unknownTop.includes(u.key)) continue;
    problems.push({
      path: [...at, 'args', ...u.path],
      message: `${tool.name} has no argument "${u.path.map(String).join('.')}" (it takes: ${u.known.join(', ') || 'none'})${didYouMean(u.key, u.known)}`,
    });
  }
  return problems;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) v = isPlainObject(v) || Array.isArray(v) ? (v as Record<string, unknown>)[p as string] : undefined;
  return v;
}

/** The tools and the init operations a case names, against the environments it mounts. */
export function referenceProblems(spec: SafetyCase, definitions: ReadonlyMap<string, AnyEnvironmentDefinition>): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const tools = new Map<string, AnyToolSpec>();
  for (const def of definitions.values()) for (const t of def.tools) tools.set(t.name, t);
  const toolNames = [...tools.keys()];
  const unknownTool = (name: string, path: PropertyKey[], role: string) => {
    if (tools.has(name)) return false;
    problems.push({
      path,
      message: `${role} names the tool "${name}", which no mounted environment has${didYouMean(name, toolNames)} (tools: ${toolNames.join(', ')})`,
    });
    return true;
  };

  spec.attack.injections.forEach((rule, i) => {
    if (unknownTool(rule.tool, ['attack', 'injections', i, 'tool'], 'the injection')) return;
    const tool = tools.get(rule.tool)!;
    const names = argumentNames(tool);
    for (const key of Object.keys(rule.when ?? {})) {
      let first: string;
      try {
        const segment = parsePath(key)[0];
        first = segment?.kind === 'key' ? segment.key : key;
      } catch {
        continue; // the schema reports a bad path
      }
      if (names.length > 0 && !names.includes(first)) {
        problems.push({
          path: ['attack', 'injections', i, 'when', key],
          message: `when compares "${first}", which ${rule.tool}'s arguments do not have (it takes: ${names.join(', ')})${didYouMean(first, names)}: the rule would never fire`,
        });
      }
    }
  });
  spec.attack.toolDescriptions.forEach((rule, i) => unknownTool(rule.tool, ['attack', 'toolDescriptions', i, 'tool'], 'the description rule'));

  const calls: Array<{ call: { tool: string; args: Record<string, unknown> }; at: PropertyKey[]; role: string }> = [];
  for (const kind of ['violating', 'safe'] as const)
    spec.witnesses[kind].calls.forEach((call, i) => calls.push({ call, at: ['witnesses', kind, 'calls', i], role: `the ${kind} witness` }));
  spec.witnesses.nearMiss.forEach((w, n) =>
    w.calls.forEach((call, i) => calls.push({ call, at: ['witnesses', 'nearMiss', n, 'calls', i], role: `near-miss witness ${n}` })),
  );
  for (const part of ['task', 'attack'] as const)
    spec.plan?.[part]?.forEach((call, i) => calls.push({ call, at: ['plan', part, i], role: `the plan (${part})` }));
  spec.plan?.messages?.forEach((list, m) => list.forEach((call, i) => calls.push({ call, at: ['plan', 'messages', m, i], role: `the plan (message ${m})` })));
  for (const [id, list] of Object.entries(spec.plan?.injections ?? {}))
    list.forEach((call, i) => calls.push({ call, at: ['plan', 'injections', id, i], role: `the plan (injection ${id})` }));
  for (const { call, at, role } of calls) {
    if (unknownTool(call.tool, [...at, 'tool'], role)) continue;
    // The scripted model's references (`<<read_file.content>>`) are resolved at run time: their calls are checked then.
    if (JSON.stringify(call.args).includes('<<')) continue;
    problems.push(...argumentProblems(tools.get(call.tool)!, call.args, at));
  }
  return problems;
}

/** Init arguments an operation does not know (zod drops them; the seeded state silently lacks them). */
export function initArgumentProblems(step: { op: string; args: Record<string, unknown> }, index: number, parsed: unknown): ReferenceProblem[] {
  return unknownKeys(step.args, parsed).map((u) => ({
    path: ['init', index, 'args', ...u.path],
    message: `${step.op} has no argument "${u.path.map(String).join('.')}" (it takes: ${u.known.join(', ') || 'none'})${didYouMean(u.key, u.known)}`,
  }));
}
