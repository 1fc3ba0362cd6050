import { casePatternProblem } from './case-pattern.js';
import { z } from 'zod';
import { isPlainObject, type JsonValue } from './json.js';
import { parsePath } from './paths.js';

/**
 * Verifier predicates are data: a case's verifier (and utility check) is a tree of these nodes,
 * evaluated deterministically by `evaluatePredicate`. Nothing in a case is ever executed as code.
 */

/** A value to compare against: a literal, a value read from the initial snapshot, or a run's secret. */
export type Operand = JsonValue | { fromInitial: string } | { secret: string };

export interface ValueMatcher {
  equals?: Operand;
  contains?: Operand;
  matches?: string;
  oneOf?: Operand[];
  gt?: Operand;
  gte?: Operand;
  lt?: Operand;
  lte?: Operand;
  exists?: boolean;
  ignoreCase?: boolean;
  not?: ValueMatcher;
  some?: Condition;
  every?: Condition;
  length?: Condition;
}

/** A matcher, or a scalar that means `{ equals: scalar }`. */
export type Condition = ValueMatcher | string | number | boolean | null;
/** Conditions on fields of an object, keyed by path. */
export type FieldConditions = Record<string, Condition>;

export interface CountBounds {
  min?: number;
  max?: number;
  equals?: number;
}

export interface ToolCallMatcher {
  tool: string | ValueMatcher;
  args?: FieldConditions;
  result?: Condition;
  error?: boolean;
  injected?: boolean;
  origin?: 'gateway' | 'agent';
  count?: CountBounds;
}

export type StateScope = 'final' | 'initial' | 'added' | 'removed' | 'changed';

export interface StateMatcher {
  path: string;
  scope?: StateScope;
  value?: Condition;
  where?: FieldConditions;
  quantifier?: 'some' | 'none' | 'all';
  count?: CountBounds;
  key?: string;
}

export interface ResponseMatcher extends ValueMatcher {
  turn?: 'any' | 'last';
}

export type Encoding = 'plain' | 'base64' | 'hex' | 'url';

export interface EgressMatcher {
  secret?: string;
  contains?: string;
  channel?: string;
  destination?: Condition;
  encodings?: Encoding[];
}

interface Labelled {
  label?: string;
}

export type Predicate =
  | ({ all: Predicate[] } & Labelled)
  | ({ any: Predicate[] } & Labelled)
  | ({ not: Predicate } & Labelled)
  | ({ toolCall: ToolCallMatcher } & Labelled)
  | ({ sequence: ToolCallMatcher[] } & Labelled)
  | ({ state: StateMatcher } & Labelled)
  | ({ response: ResponseMatcher } & Labelled)
  | ({ egress: EgressMatcher } & Labelled)
  | ({ custom: string } & Labelled);

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

const pathString = z.string().min(1, 'a path cannot be empty').superRefine((path, ctx) => {
  try {
    parsePath(path);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const operand: z.ZodType<Operand> = dispatch<Operand>((value) => {
  if (isPlainObject(value) && 'fromInitial' in value) return z.strictObject({ fromInitial: pathString });
  if (isPlainObject(value) && 'secret' in value && Object.keys(value).length === 1) return z.strictObject({ secret: z.string().min(1) });
  return jsonValue;
});

const numberOperand = z.union([z.number(), z.strictObject({ fromInitial: pathString })]);

const regexString = z.string().min(1).superRefine((source, ctx) => {
  const problem = casePatternProblem(source);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const matcherKeys = [
  'equals', 'contains', 'matches', 'oneOf', 'gt', 'gte', 'lt', 'lte', 'exists', 'not', 'some', 'every', 'length',
] as const;

const valueMatcherShape = {
  equals: operand.optional(),
  // An empty `contains` would hold on every string: the `x or "" in s` slip, refused here.
  contains: dispatch<Operand>((value) =>
    typeof value === 'string' ? z.string().min(1, '`contains: ""` would match everything') : operand,
  ).optional(),
  matches: regexString.optional(),
  oneOf: z.array(operand).min(1).optional(),
  gt: numberOperand.optional(),
  gte: numberOperand.optional(),
  lt: numberOperand.optional(),
  lte: numberOperand.optional(),
  exists: z.boolean().optional(),
  ignoreCase: z.boolean().optional(),
  get not() {
    return valueMatcher.optional();
  },
  get some() {
    return condition.optional();
  },
  get every() {
    return condition.optional();
  },
  get length() {
    return condition.optional();
  },
};

function hasCondition(value: Record<string, unknown>): boolean {
  return matcherKeys.some((k) => value[k] !== undefined);
}

export const valueMatcher: z.ZodType<ValueMatcher> = z
  .strictObject(valueMatcherShape)
  .refine(hasCondition, { message: `a matcher needs one of: ${matcherKeys.join(', ')}` }) as z.ZodType<ValueMatcher>;

export const condition: z.ZodType<Condition> = dispatch<Condition>((value) =>
  isPlainObject(value) ? valueMatcher : z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'expected a scalar or a matcher object' }),
);

export const fieldConditions: z.ZodType<FieldConditions> = z.record(pathString, condition);

const countBounds: z.ZodType<CountBounds> = z
  .strictObject({
    min: z.int().nonnegative().optional(),
    max: z.int().nonnegative().optional(),
    equals: z.int().nonnegative().optional(),
  })
  .refine((c) => c.min !== undefined || c.max !== undefined || c.equals !== undefined, {
    message: 'count needs min, max or equals',
  })
  .refine((c) => c.min === undefined || c.max === undefined || c.min <= c.max, { message: 'count.min > count.max' });

export const toolCallMatcher: z.ZodType<ToolCallMatcher> = z.strictObject({
  tool: z.union([z.string().min(1), valueMatcher]),
  args: fieldConditions.optional(),
  result: condition.optional(),
  error: z.boolean().optional(),
  injected: z.boolean().optional(),
  origin: z.enum(['gateway', 'agent']).optional(),
  count: countBounds.optional(),
});

export const stateMatcher: z.ZodType<StateMatcher> = z
  .strictObject({
    path: pathString,
    scope: z.enum(['final', 'initial', 'added', 'removed', 'changed']).optional(),
    value: condition.optional(),
    where: fieldConditions.optional(),
    quantifier: z.enum(['some', 'none', 'all']).optional(),
    count: countBounds.optional(),
    key: z.string().min(1).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.value !== undefined) {
      for (const k of ['where', 'quantifier', 'count', 'key'] as const) {
        if (s[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `\`${k}\` applies to collections; it cannot be combined with \`value\`` });
      }
      if (s.scope && s.scope !== 'final' && s.scope !== 'initial') {
        ctx.addIssue({ code: 'custom', path: ['scope'], message: `scope "${s.scope}" applies to collections; use \`where\` instead of \`value\`` });
      }
    }
    if (s.quantifier !== undefined && s.count !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['count'], message: 'use either `quantifier` or `count`, not both' });
    }
  });

export const responseMatcher: z.ZodType<ResponseMatcher> = z
  .strictObject({ ...valueMatcherShape, turn: z.enum(['any', 'last']).optional() })
  .refine(hasCondition, { message: `a response matcher needs one of: ${matcherKeys.join(', ')}` }) as z.ZodType<ResponseMatcher>;

export const egressMatcher: z.ZodType<EgressMatcher> = z.strictObject({
  secret: z.string().min(1).optional(),
  contains: z.string().min(1, '`contains: ""` would match every egress').optional(),
  channel: z.string().min(1).optional(),
  destination: condition.optional(),
  encodings: z.array(z.enum(['plain', 'base64', 'hex', 'url'])).min(1).optional(),
});

const label = { label: z.string().optional() };

export const predicateKinds = ['all', 'any', 'not', 'toolCall', 'sequence', 'state', 'response', 'egress', 'custom'] as const;
type PredicateKind = (typeof predicateKinds)[number];

const predicateShapes: Record<PredicateKind, () => z.ZodType> = {
  all: () => z.strictObject({ all: z.array(predicate).min(1), ...label }),
  any: () => z.strictObject({ any: z.array(predicate).min(1), ...label }),
  not: () => z.strictObject({ not: predicate, ...label }),
  toolCall: () => z.strictObject({ toolCall: toolCallMatcher, ...label }),
  sequence: () => z.strictObject({ sequence: z.array(toolCallMatcher).min(2, 'a sequence needs at least two steps'), ...label }),
  state: () => z.strictObject({ state: stateMatcher, ...label }),
  response: () => z.strictObject({ response: responseMatcher, ...label }),
  egress: () => z.strictObject({ egress: egressMatcher, ...label }),
  custom: () => z.strictObject({ custom: z.string().min(1), ...label }),
};

/** Picks the node's schema by its one kind key, so an error points inside that node, not at a union. */
export const predicate: z.ZodType<Predicate> = dispatch<Predicate>((value) => {
  const kinds = isPlainObject(value) ? predicateKinds.filter((k) => k in value) : [];
  if (kinds.length === 1) return predicateShapes[kinds[0]!]();
  const found = isPlainObject(value) ? Object.keys(value).filter((k) => k !== 'label') : [];
  const message =
    kinds.length > 1
      ? `a predicate has exactly one of ${predicateKinds.join(', ')}; found ${kinds.join(' and ')} (wrap them in \`all\`)`
      : `a predicate needs one of ${predicateKinds.join(', ')}${found.length ? `; found ${found.join(', ')}` : ''}`;
  return z.never({ error: message });
});

/**
 * A schema chosen from the value's shape. Zod's plain unions report "invalid input" for every
 * branch; choosing first gives one error that names the field that is wrong.
 */
function dispatch<T>(choose: (value: unknown) => z.ZodType): z.ZodType<T> {
  return z.unknown().check((ctx) => {
    const result = choose(ctx.value).safeParse(ctx.value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.issues.push({ code: 'custom', message: issue.message, path: issue.path as PropertyKey[], input: ctx.value });
    }
  }) as unknown as z.ZodType<T>;
}
