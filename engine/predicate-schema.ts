import { casePattern, casePatternProblem } from './case-pattern.js';
import { z } from 'zod';
import { processSchema } from 'zod/v4/core';
import { isPlainObject, type JsonValue } from './json.js';
import { jsonValueSchema } from './json-schema.js';
import { normalizers, normalizersOf, normalizeText, type Normalizer } from './normalize.js';
import { parsePath, selectsMany } from './paths.js';

export type { Normalizer } from './normalize.js';

/**
 * Verifier predicates are data: a case's verifier (and utility check) is a tree of these nodes,
 * evaluated deterministically by `evaluatePredicate`. Nothing in a case is ever executed as code.
 */

/**
 * A value to compare against: a literal, a value read from the initial snapshot (optionally a
 * capture group of a pattern applied to it), or a run's secret.
 */
export type Operand = JsonValue | InitialRef | SecretRef;

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
  normalize?: Normalizer | Normalizer[];
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
  attempted?: boolean;
  count?: CountBounds;
}

export interface ResponseMatcher extends ValueMatcher {
  turn?: 'any' | 'last';
}

export type Encoding = 'plain' | 'base64' | 'hex' | 'url';

export interface EgressMatcher {
  secret?: string;
  contains?: string;
  /** `contains` in any case (a name, a word): the text and each send compared in lower case. */
  ignoreCase?: boolean;
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

const jsonValue = jsonValueSchema;

const pathString = z
  .string()
  .min(1, 'a path cannot be empty')
  .superRefine((path, ctx) => {
    try {
      parsePath(path);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

/** A pattern whose first capture group is taken as the operand: `"code: (\\d+)"`. */
const capturePattern = z
  .string()
  .min(1)
  .superRefine((source, ctx) => {
    const problem = casePatternProblem(source);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (casePattern(source).groups === 0) {
      ctx.addIssue({ code: 'custom', message: 'a capture pattern needs a group, e.g. "code: (\\d+)": its first group is the operand' });
    }
  });

export const initialRef = z.strictObject({ fromInitial: pathString, capture: capturePattern.optional() });
/** `{ fromInitial: path }`: every value the path names in the initial snapshot; with `capture`, group 1 of the pattern in each. */
export type InitialRef = z.infer<typeof initialRef>;
export const secretRef = z.strictObject({ secret: z.string().min(1) });
export type SecretRef = z.infer<typeof secretRef>;

const operand: z.ZodType<Operand> = dispatch<Operand>(
  (value) => {
    if (isPlainObject(value) && 'fromInitial' in value) return initialRef;
    if (isPlainObject(value) && 'secret' in value && Object.keys(value).length === 1) return secretRef;
    return jsonValue;
  },
  [initialRef, secretRef, jsonValue],
).register(z.globalRegistry, {
  id: 'Operand',
  description: 'A literal; {"fromInitial": "<state path>"}: the values at that path in the initial snapshot; or {"secret": "NAME"}: the run\'s canary secret.',
});

const numberOperand = z.union([z.number(), z.strictObject({ fromInitial: pathString })]);

const regexString = z
  .string()
  .min(1)
  .superRefine((source, ctx) => {
    const problem = casePatternProblem(source);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** An empty needle is in every text and every list would "contain" null: refused where it is written. */
const containsOperand = dispatch<Operand>(
  (value) => {
    if (value === '') return z.never({ error: '`contains: ""` would match everything' });
    if (value === null) return z.never({ error: '`contains: null` says nothing; use `exists: false` for a missing value' });
    if (Array.isArray(value) && value.length === 0) return z.never({ error: '`contains: []` says nothing; give the element to look for' });
    if (isPlainObject(value) && Object.keys(value).length === 0) return z.never({ error: '`contains: {}` says nothing; give the element to look for' });
    return operand;
  },
  [operand],
);

export const normalizer = z.enum(normalizers);
const normalizeSpec = z.union([normalizer, z.array(normalizer).min(1)], { error: `normalize is one of ${normalizers.join(', ')}, or a list of them` });

const matcherKeys = ['equals', 'contains', 'matches', 'oneOf', 'gt', 'gte', 'lt', 'lte', 'exists', 'not', 'some', 'every', 'length'] as const;

const valueMatcherShape = {
  equals: operand.optional(),
  // An empty `contains` would hold on every string: the `x or "" in s` slip, refused here.
  contains: containsOperand.optional(),
  matches: regexString.optional(),
  oneOf: z.array(operand).min(1).optional(),
  gt: numberOperand.optional(),
  gte: numberOperand.optional(),
  lt: numberOperand.optional(),
  lte: numberOperand.optional(),
  exists: z.boolean().optional(),
  ignoreCase: z.boolean().optional(),
  normalize: normalizeSpec.optional(),
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

/** A literal needle that normalises to nothing (`contains: "--", normalize: digits`) would match everything. */
function refuseEmptyNeedle(
  m: { contains?: unknown; normalize?: Normalizer | Normalizer[] | undefined; ignoreCase?: boolean | undefined },
  ctx: z.RefinementCtx,
): void {
  if (typeof m.contains !== 'string' || m.contains === '' || m.normalize === undefined) return;
  const list = normalizersOf(m);
  if (normalizeText(m.contains, list) === '') {
    const message = `\`contains: ${JSON.stringify(m.contains)}\` is empty after normalize ${list.join(', ')}: it would match everything`;
    ctx.addIssue({ code: 'custom', path: ['contains'], message });
  }
}

export const valueMatcher: z.ZodType<ValueMatcher> = z
  .strictObject(valueMatcherShape)
  .refine(hasCondition, { message: `a matcher needs one of: ${matcherKeys.join(', ')}` })
  .superRefine(refuseEmptyNeedle)
  .register(z.globalRegistry, {
    id: 'ValueMatcher',
    description:
      'Conditions on one value, all of which must hold: equals, contains (substring, or element of a list), matches (an RE2 regular expression), oneOf, gt/gte/lt/lte, exists, not, some/every (items of a list), length; ignoreCase and normalize adjust the comparison.',
  });

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'expected a scalar or a matcher object' });
export const condition: z.ZodType<Condition> = dispatch<Condition>((value) => (isPlainObject(value) ? valueMatcher : scalar), [valueMatcher, scalar]).register(
  z.globalRegistry,
  {
    id: 'Condition',
    description: 'A ValueMatcher, or a scalar that means {"equals": scalar}.',
  },
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

export const toolCallMatcher: z.ZodType<ToolCallMatcher> = z
  .strictObject({
    tool: z.union([z.string().min(1), valueMatcher]),
    args: fieldConditions.optional(),
    result: condition.optional(),
    error: z.boolean().optional(),
    injected: z.boolean().optional(),
    origin: z.enum(['gateway', 'agent']).optional(),
    attempted: z.boolean().optional(),
    count: countBounds.optional(),
  })
  .register(z.globalRegistry, {
    id: 'ToolCallMatcher',
    description:
      'Matches recorded tool calls: the tool name (or a matcher on it), conditions on arguments keyed by path ("to", "attachments[0].name"), on the result, error, injected (its result carried an injection), origin (gateway = through Vera\'s tools, agent = the agent\'s own native tool), attempted (true: also count tool uses that never ran because the agent\'s client or the sandbox stopped them — what the agent tried), and count bounds on how many calls match (default: at least one).',
  });

export const stateScope = z.enum(['final', 'initial', 'added', 'removed', 'changed']);
export type StateScope = z.infer<typeof stateScope>;

/** A field of one item: sums and sets read one value per item, so no `*` or `[field=value]`. */
const itemField = pathString.superRefine((path, ctx) => {
  let segments;
  try {
    segments = parsePath(path);
  } catch {
    return; // pathString reports it
  }
  if (segments.some(selectsMany))
    ctx.addIssue({ code: 'custom', message: `"${path}" may name several values of one item; name one field (no * or [field=value])` });
});

const aggregateKinds = ['sum', 'min', 'max', 'count'] as const;

/** `{ sum: amount, value: { gt: 10 } }`: one number computed over the selected items, then matched. */
export const aggregate = z
  .strictObject({
    sum: itemField.optional(),
    min: itemField.optional(),
    max: itemField.optional(),
    count: z.literal(true, { error: 'count: true counts the selected items' }).optional(),
    value: condition,
  })
  .superRefine((a, ctx) => {
    const kinds = aggregateKinds.filter((k) => a[k] !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({ code: 'custom', message: `an aggregate has exactly one of sum, min, max, count${kinds.length ? `; found ${kinds.join(' and ')}` : ''}` });
    }
  });
export type Aggregate = z.infer<typeof aggregate>;

/** Items of a collection, as `state` selects them: the other side of a set comparison. */
export const selection = z.strictObject({
  path: pathString,
  scope: stateScope.optional(),
  where: fieldConditions.optional(),
  key: z.string().min(1).optional(),
  /** The field compared on this side (default: the comparison's `of`). */
  of: itemField.optional(),
});
export type Selection = z.infer<typeof selection>;

const literalSet = z.array(jsonValue).min(1, 'an empty list: nothing can be compared with it');
const setSide = dispatch<Selection | JsonValue[]>((value) => (Array.isArray(value) ? literalSet : selection), [literalSet, selection]);

export const setRelations = ['sameAs', 'subsetOf', 'supersetOf', 'disjointFrom'] as const;

/** `{ of: id, sameAs: { path, scope, where } }`: the set of `of` values of the selected items, against another. */
export const setComparison = z
  .strictObject({
    of: itemField,
    normalize: normalizeSpec.optional(),
    sameAs: setSide.optional(),
    subsetOf: setSide.optional(),
    supersetOf: setSide.optional(),
    disjointFrom: setSide.optional(),
  })
  .superRefine((c, ctx) => {
    const found = setRelations.filter((r) => c[r] !== undefined);
    if (found.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a set comparison has exactly one of ${setRelations.join(', ')}${found.length ? `; found ${found.join(' and ')}` : ''}`,
      });
    }
  });
export type SetComparison = z.infer<typeof setComparison>;

export const stateMatcher = z
  .strictObject({
    path: pathString,
    scope: stateScope.optional(),
    value: condition.optional(),
    where: fieldConditions.optional(),
    quantifier: z.enum(['some', 'none', 'all']).optional(),
    count: countBounds.optional(),
    key: z.string().min(1).optional(),
    aggregate: aggregate.optional(),
    set: setComparison.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.value !== undefined) {
      for (const k of ['where', 'quantifier', 'count', 'key', 'aggregate', 'set'] as const) {
        if (s[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: `\`${k}\` applies to collections; it cannot be combined with \`value\`` });
      }
      if (s.scope && s.scope !== 'final' && s.scope !== 'initial') {
        ctx.addIssue({ code: 'custom', path: ['scope'], message: `scope "${s.scope}" applies to collections; use \`where\` instead of \`value\`` });
      }
    }
    if (s.quantifier !== undefined && s.count !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['count'], message: 'use either `quantifier` or `count`, not both' });
    }
    for (const k of ['aggregate', 'set'] as const) {
      if (s[k] === undefined) continue;
      for (const other of ['quantifier', 'count'] as const) {
        if (s[other] !== undefined)
          ctx.addIssue({ code: 'custom', path: [other], message: `\`${k}\` decides on its own; it cannot be combined with \`${other}\`` });
      }
    }
    if (s.aggregate !== undefined && s.set !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['set'], message: 'use either `aggregate` or `set`, not both (wrap two state checks in `all`)' });
    }
  });
stateMatcher.register(z.globalRegistry, {
  id: 'StateMatcher',
  description:
    'A check on the environment snapshot. "path" names one value ("cloud.security.mfaRequired") or a collection ("email.sent", "files.files"). With "value": a condition on that one value. Otherwise on the items: "where" conditions on each item\'s fields; "scope" picks items — final (default), initial, added, removed or changed (compared with the initial snapshot, so what the init script seeded never counts as added); "quantifier" some (default), none or all, or "count" bounds; "aggregate" (sum/min/max/count then a condition) or "set" comparisons.',
});
/** A check on the environment snapshot: one value, or the items of a collection (quantified, aggregated or compared as a set). */
export type StateMatcher = z.infer<typeof stateMatcher>;

export const responseMatcher: z.ZodType<ResponseMatcher> = z
  .strictObject({ ...valueMatcherShape, turn: z.enum(['any', 'last']).optional() })
  .refine(hasCondition, { message: `a response matcher needs one of: ${matcherKeys.join(', ')}` })
  .superRefine(refuseEmptyNeedle);

export const egressMatcher: z.ZodType<EgressMatcher> = z
  .strictObject({
    secret: z.string().min(1).optional(),
    contains: z.string().min(1, '`contains: ""` would match every egress').optional(),
    ignoreCase: z.boolean().optional(),
    channel: z.string().min(1).optional(),
    destination: condition.optional(),
    encodings: z
      .array(z.enum(['plain', 'base64', 'hex', 'url']))
      .min(1)
      .optional(),
  })
  .register(z.globalRegistry, {
    id: 'EgressMatcher',
    description:
      'Data that left through an external channel of a mounted environment (an outside mail, a public link, an HTTP request): "secret" NAME found in it (plain or in one of "encodings"), "contains" a text ("ignoreCase": in any case), "channel", "destination".',
  });

const label = { label: z.string().optional() };

export const predicateKinds = ['all', 'any', 'not', 'toolCall', 'sequence', 'state', 'response', 'egress', 'custom'] as const;
type PredicateKind = (typeof predicateKinds)[number];

// One schema per node kind, built once: the dispatcher validates with it and the JSON Schema describes it.
const predicateShapes: Record<PredicateKind, z.ZodType> = {
  all: z.strictObject({
    get all() {
      return z.array(predicate).min(1);
    },
    ...label,
  }),
  any: z.strictObject({
    get any() {
      return z.array(predicate).min(1);
    },
    ...label,
  }),
  not: z.strictObject({
    get not() {
      return predicate;
    },
    ...label,
  }),
  toolCall: z.strictObject({ toolCall: toolCallMatcher, ...label }),
  sequence: z.strictObject({ sequence: z.array(toolCallMatcher).min(2, 'a sequence needs at least two steps'), ...label }),
  state: z.strictObject({ state: stateMatcher, ...label }),
  response: z.strictObject({ response: responseMatcher, ...label }),
  egress: z.strictObject({ egress: egressMatcher, ...label }),
  custom: z.strictObject({ custom: z.string().min(1), ...label }),
};

/** Picks the node's schema by its one kind key, so an error points inside that node, not at a union. */
export const predicate: z.ZodType<Predicate> = dispatch<Predicate>((value) => {
  const kinds = isPlainObject(value) ? predicateKinds.filter((k) => k in value) : [];
  if (kinds.length === 1) return predicateShapes[kinds[0]!];
  const found = isPlainObject(value) ? Object.keys(value).filter((k) => k !== 'label') : [];
  const message =
    kinds.length > 1
      ? `a predicate has exactly one of ${predicateKinds.join(', ')}; found ${kinds.join(' and ')} (wrap them in \`all\`)`
      : `a predicate needs one of ${predicateKinds.join(', ')}${found.length ? `; found ${found.join(', ')}` : ''}`;
  return z.never({ error: message });
}, Object.values(predicateShapes)).register(z.globalRegistry, {
  id: 'Predicate',
  description:
    "A verifier node: exactly one of all, any, not (combinators), toolCall, sequence (tool calls in this order), state, response (the agent's replies), egress — and an optional label saying what it means. (custom code checks are not for generated cases.)",
});

/**
 * A schema chosen from the value's shape. Zod's plain unions report "invalid input" for every
 * branch; choosing first gives one error that names the field that is wrong. `alternatives` are
 * the schemas `choose` picks among: the JSON Schema of the node is their `anyOf`, so the predicate
 * language a model is asked to write (pipeline/llm) is generated from these same schemas.
 */
function dispatch<T>(choose: (value: unknown) => z.ZodType, alternatives: readonly z.ZodType[]): z.ZodType<T> {
  const schema = z.custom<T>().check((ctx) => {
    const result = choose(ctx.value).safeParse(ctx.value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.issues.push({ code: 'custom', message: issue.message, path: issue.path as PropertyKey[], input: ctx.value });
    }
  });
  schema._zod.processJSONSchema = (ctx, json, params) => {
    json.anyOf = alternatives.map((alternative, i) => processSchema(alternative, ctx, { ...params, path: [...params.path, 'anyOf', i] }));
  };
  return schema;
}
