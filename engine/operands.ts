import { casePattern } from './case-pattern.js';
import { isPlainObject, preview, toText } from './json.js';
import { resolvePath } from './paths.js';
import type { InitialRef, Operand } from './predicate-schema.js';
import { fillSecrets, type Secrets } from './secrets.js';
import { OperandError } from './verifier-error.js';

/** What operands may refer to: the run's secrets and the initial environment snapshot. */
export interface OperandScope {
  secrets: Secrets;
  initial: unknown;
  /**
   * What one verification may spend on regular expressions, in RE2 instructions × characters
   * (see `case-pattern.ts`): shared by every `matches` of the run's judgement. Absent: no bound.
   */
  matchWork?: { left: number };
}

/** One value an operand stands for, and how evidence names it: `initial email.inbox[1].subject ("Q3")`. */
export interface OperandValue {
  value: unknown;
  source: string;
}

export interface ResolvedOperand {
  /** At least one value. A `fromInitial` path may name several: a condition holds when it holds for any of them. */
  values: OperandValue[];
  /** How evidence names the operand as a whole: one value's source, or `any of the 3 values at initial …`. */
  label: string;
}

type Ref = { kind: 'initial'; ref: InitialRef } | { kind: 'secret'; name: string };

function refOf(operand: unknown): Ref | undefined {
  if (!isPlainObject(operand)) return undefined;
  const keys = Object.keys(operand);
  if (typeof operand.fromInitial === 'string' && keys.every((k) => k === 'fromInitial' || k === 'capture')) {
    const ref: InitialRef = { fromInitial: operand.fromInitial };
    if (typeof operand.capture === 'string') ref.capture = operand.capture;
    return { kind: 'initial', ref };
  }
  if (typeof operand.secret === 'string' && keys.length === 1) return { kind: 'secret', name: operand.secret };
  return undefined;
}

/** The `fromInitial` reference inside an operand, if it is one. */
export function initialRefOf(operand: unknown): InitialRef | undefined {
  const ref = refOf(operand);
  return ref?.kind === 'initial' ? ref.ref : undefined;
}

/**
 * The values an operand stands for. A reference that yields nothing throws `OperandError`: a
 * condition against "nothing" would be false, and under `not` always true — never a verdict.
 */
export function resolveOperand(operand: Operand | undefined, scope: OperandScope): ResolvedOperand {
  const ref = refOf(operand);
  if (ref?.kind === 'initial') return resolveInitial(ref.ref, scope.initial);
  if (ref?.kind === 'secret') {
    const value = scope.secrets[ref.name];
    if (value === undefined) throw new OperandError(`secret ${ref.name} has no value in this run`);
    return one(value, `secret ${ref.name}`);
  }
  const value = fillSecrets(operand, scope.secrets);
  return one(value, typeof operand === 'string' && operand.includes('{{secret.') ? preview(operand, 80) : preview(value, 80));
}

function one(value: unknown, source: string): ResolvedOperand {
  return { values: [{ value, source }], label: source };
}

function resolveInitial(ref: InitialRef, initial: unknown): ResolvedOperand {
  const found = resolvePath(initial, ref.fromInitial);
  if (found.length === 0) throw new OperandError(`fromInitial "${ref.fromInitial}" names nothing in the initial snapshot`);
  let values: OperandValue[];
  if (ref.capture === undefined) {
    values = found.map((m) => ({ value: m.value, source: `initial ${m.path} (${preview(m.value, 60)})` }));
  } else {
    const pattern = casePattern(ref.capture);
    values = [];
    for (const m of found) {
      const captured = pattern.capture(toText(m.value));
      if (captured !== undefined) values.push({ value: captured, source: `${preview(captured, 60)} captured by /${ref.capture}/ from initial ${m.path}` });
    }
    if (values.length === 0) {
      const searched = found.length === 1 ? preview(found[0]!.value, 80) : `${found.length} values`;
      throw new OperandError(`capture /${ref.capture}/ finds nothing in initial ${ref.fromInitial} (${searched})`);
    }
  }
  const how = ref.capture === undefined ? 'at' : `captured by /${ref.capture}/ from`;
  const label =
    values.length === 1
      ? values[0]!.source
      : `any of the ${values.length} values ${how} initial ${ref.fromInitial} (${preview(
          values.map((v) => v.value),
          80,
        )})`;
  return { values, label };
}
