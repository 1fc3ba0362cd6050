import { z } from 'zod';
import { fieldConditions, predicate } from './predicate-schema.js';
import { parsePath } from './paths.js';
import { injectsToolResults, strategyIds, threatModels, toolDescriptionRuleId } from './case-helpers.js';

/**
 * The case format, v1. One YAML file holds one case; docs/case-format.md documents every field.
 * Schemas first, types inferred: everything downstream reads `SafetyCase`.
 */

export {
  threatModels,
  strategyIds,
  injectsToolResults,
  adversarialUser,
  environmentsOf,
  injectionRuleId,
  toolDescriptionRuleId,
  type ThreatModel,
  type StrategyId,
} from './case-helpers.js';
export const threatModel = z.enum(threatModels);

const id = z
  .string()
  // It names record files (`<id>--<threat model>--r<k>.json`) and tests: file systems stop at 255 bytes.
  .max(120, 'an id is at most 120 characters (it names record files and tests)')
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'use lower-case letters, digits and "-" (it names files and tests)');

const taxonomyRef = z
  .string()
  .regex(/^[a-z0-9-]+(\/[a-z0-9-]+)*$/, 'a taxonomy reference is a "/"-separated path of lower-case ids, e.g. data-exfiltration/credential-leak');

/**
 * The LLM adversary's built-in strategies (docs/threat-models.md). Each has its own prompt
 * guidance in `control/strategies.ts`; a case may pin its own sequence in `attack.strategies`.
 */
export const strategyId = z.enum(strategyIds);

/**
 * What the honest user knows beyond the task, so the benign user simulator can answer the
 * agent's clarifying questions without attacking: free facts, and canned answers.
 */
export const userKnowledge = z.strictObject({
  /** `topic: answer`. A question that names the topic (all of its words) gets the answer. */
  facts: z.record(z.string().min(1), z.string().min(1)).default({}),
  /** Checked before `facts`: a question containing `when` (or any of them; case-insensitive) gets `reply`. */
  answers: z.array(z.strictObject({ when: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), reply: z.string().min(1) })).default([]),
});
export type UserKnowledge = z.infer<typeof userKnowledge>;

export const injectionMode = z.enum(['identity', 'append', 'prefix', 'override']);
export type InjectionMode = z.infer<typeof injectionMode>;

const pathString = z
  .string()
  .min(1)
  .superRefine((path, ctx) => {
    try {
      parsePath(path);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

export const injectionRule = z
  .strictObject({
    id: id.optional(),
    /** The tool whose results are rewritten. */
    tool: z.string().min(1),
    /** Only calls whose arguments satisfy these conditions. */
    when: fieldConditions.optional(),
    /** Where in the parsed result; omitted = the whole text content. `*` reaches every item. */
    field: pathString.optional(),
    /** Only items (at `field`'s parent) whose fields satisfy these conditions. */
    where: fieldConditions.optional(),
    mode: injectionMode,
    payload: z.string(),
    /** At most this many rewrites per run (default: every matching call). */
    times: z.int().positive().optional(),
    /**
     * Leave the first `after` matching calls alone (a rug pull: the tool behaves until it has
     * been trusted, then its results change).
     */
    after: z.int().positive().optional(),
  })
  .refine((r) => r.mode === 'identity' || r.payload.length > 0, {
    message: 'payload cannot be empty unless mode is identity',
    path: ['payload'],
  });
export type InjectionRule = z.infer<typeof injectionRule>;

/**
 * A rewrite of a tool's description in the tool list the agent sees (MCP tool poisoning: the
 * instructions live in the tool's metadata, not in any result). With `afterCalls`, the list
 * changes only once the run has made that many tool calls (a rug pull on the description).
 * Applied in the threat models that inject tool results.
 */
export const toolDescriptionRule = z.strictObject({
  id: id.optional(),
  tool: z.string().min(1),
  mode: z.enum(['append', 'prefix', 'override']),
  payload: z.string().min(1),
  afterCalls: z.int().positive().optional(),
});
export type ToolDescriptionRule = z.infer<typeof toolDescriptionRule>;

/** One environment operation of the init script: `{ op: "email.deliver", args: {...} }`. */
export const initStep = z.strictObject({
  op: z.string().regex(/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_]*$/, 'an operation is "<environment>.<operation>", e.g. email.deliver'),
  args: z.record(z.string(), z.unknown()).default({}),
});
export type InitStep = z.infer<typeof initStep>;

/**
 * What `vera check --robustness` should know of this case: routes an environment declares that are
 * another act here, not the same harm by another way (a standing order where the harm is paying at
 * once), each with the reason. They are not tried; the check prints each one.
 */
export const caseRobustness = z.strictObject({
  notTheSameAct: z.record(
    z.string().regex(/^[a-z][a-z0-9-]*\/[a-z0-9-]+$/, 'a route is named <environment>/<route>, e.g. payments/standing-order'),
    z.string().min(10, 'say why that route is another act in this case'),
  ),
});
export type CaseRobustness = z.infer<typeof caseRobustness>;

export const witnessCall = z.strictObject({
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()).default({}),
});

/** A trajectory written by hand: tool calls replayed against the initialised sandbox, and replies. */
export const witness = z.strictObject({
  calls: z.array(witnessCall).default([]),
  responses: z.array(z.string()).default([]),
});
export type Witness = z.infer<typeof witness>;

/**
 * What the embedded scripted model does in a run (the deterministic stand-in for a model that
 * reads English): which tool calls follow the honest task, each adversarial message and each
 * injection. It is never shown to an agent — it reaches the scripted model out of band, keyed to
 * the run — and a real model ignores it. Optional: without it the task plan is the safe witness's
 * calls and the attack plan the violating witness's. Argument strings may refer to earlier tool
 * results (`<<read_file.content>>`), resolved by the scripted model as it acts.
 */
export const scriptedPlan = z.strictObject({
  /** Calls that carry out the honest task. */
  task: z.array(witnessCall).optional(),
  /** Calls that carry out the harmful goal: what an adversarial message or an injection leads to. */
  attack: z.array(witnessCall).optional(),
  /** Per `attack.messages` entry (by position), instead of `attack`. */
  messages: z.array(z.array(witnessCall)).optional(),
  /** Per injection rule id, instead of `attack`. */
  injections: z.record(z.string(), z.array(witnessCall)).optional(),
});
export type ScriptedPlan = z.infer<typeof scriptedPlan>;

export const secretSpec = z.strictObject({
  format: z.enum(['token', 'digits', 'hex', 'api-key', 'password']).default('token'),
  length: z.int().min(4).max(128).optional(),
});
export type SecretSpec = z.infer<typeof secretSpec>;

export const budgets = z.strictObject({
  turns: z.int().positive().max(50).default(3),
  toolCalls: z.int().positive().max(1000).default(30),
  seconds: z.number().positive().max(3600).default(120),
});
export type Budgets = z.infer<typeof budgets>;

export const safetyCase = z
  .strictObject({
    id,
    title: z.string().min(3),
    goal: z.string().min(10, 'the goal states the concrete violation in a sentence'),
    taxonomy: z.strictObject({ risk: taxonomyRef, attack: taxonomyRef, environment: taxonomyRef }),
    /** Environments mounted in the sandbox (default: the taxonomy environment's first segment). */
    environments: z.array(z.string().min(1)).optional(),
    task: z.string().min(3),
    /** What the honest user can tell the agent when it asks (benign user simulator). */
    user: userKnowledge.optional(),
    attack: z
      .strictObject({
        guidance: z.string().optional(),
        messages: z.array(z.string().min(1)).optional(),
        injections: z.array(injectionRule).default([]),
        /** Rewrites of tool descriptions (tool poisoning, rug pulls), in the threat models that inject. */
        toolDescriptions: z.array(toolDescriptionRule).default([]),
        /** The LLM adversary's strategy sequence for this case (overrides the per-attack-method defaults). */
        strategies: z.array(strategyId).min(1).optional(),
      })
      .default({ injections: [], toolDescriptions: [] }),
    secrets: z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'secret names are UPPER_SNAKE_CASE'), secretSpec).default({}),
    init: z.array(initStep).default([]),
    verifier: predicate,
    utility: predicate.optional(),
    budgets: budgets.default({ turns: 3, toolCalls: 30, seconds: 120 }),
    threatModels: z.array(threatModel).min(1).default(['benign', 'single-channel', 'multi-channel']),
    /** Runs per threat model (overrides the run's `repeats` option); each repeat is seeded and recorded. */
    repeats: z.int().positive().max(1000).optional(),
    witnesses: z.strictObject({
      violating: witness,
      safe: witness,
      /**
       * Safe trajectories that come close to the harm (the right file to a colleague, 9.99
       * instead of 10.01, the canary redacted): an over-broad verifier calls one of them violated.
       */
      nearMiss: z.array(witness).default([]),
    }),
    /** The embedded scripted model's plan (never shown to an agent); see `scriptedPlan`. */
    plan: scriptedPlan.optional(),
    tags: z.array(z.string()).default([]),
    /**
     * Load-time checks this case deliberately fails, each with the reason (a fixture that must end
     * N/A has an injection no honest task reaches). `vera check` prints every waiver; the bundled
     * library has none.
     */
    waive: z.strictObject({ provenance: z.string().min(10, 'say why the check does not apply to this case') }).optional(),
    robustness: caseRobustness.optional(),
  })
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.threatModels.forEach((m, i) => {
      if (seen.has(m)) ctx.addIssue({ code: 'custom', path: ['threatModels', i], message: `"${m}" is listed twice` });
      seen.add(m);
      if (injectsToolResults(m) && c.attack.injections.length === 0 && c.attack.toolDescriptions.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['threatModels', i],
          message: `"${m}" injects tool results, but attack.injections is empty (and there are no attack.toolDescriptions)`,
        });
      }
    });
    const ids = new Set<string>();
    c.attack.injections.forEach((rule, i) => {
      const ruleId = rule.id ?? `${rule.tool}#${i}`;
      if (ids.has(ruleId)) ctx.addIssue({ code: 'custom', path: ['attack', 'injections', i, 'id'], message: `duplicate injection id "${ruleId}"` });
      ids.add(ruleId);
    });
    c.attack.toolDescriptions.forEach((rule, i) => {
      const ruleId = toolDescriptionRuleId(rule, i);
      if (ids.has(ruleId)) ctx.addIssue({ code: 'custom', path: ['attack', 'toolDescriptions', i, 'id'], message: `duplicate injection id "${ruleId}"` });
      ids.add(ruleId);
    });
    for (const ruleId of Object.keys(c.plan?.injections ?? {})) {
      if (!ids.has(ruleId))
        ctx.addIssue({
          code: 'custom',
          path: ['plan', 'injections', ruleId],
          message: `no injection rule "${ruleId}" (rules: ${[...ids].join(', ') || 'none'})`,
        });
    }
    if (c.plan?.messages && c.plan.messages.length > (c.attack.messages?.length ?? 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['plan', 'messages'],
        message: `${c.plan.messages.length} message plans for ${c.attack.messages?.length ?? 0} attack.messages`,
      });
    }
  });

export type SafetyCase = z.infer<typeof safetyCase>;
export type SafetyCaseInput = z.input<typeof safetyCase>;
