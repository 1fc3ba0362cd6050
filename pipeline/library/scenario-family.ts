import { z } from 'zod';
import { budgets, caseRobustness, initStep, injectionRule, scriptedPlan, secretSpec, userKnowledge, witness } from '../../engine/case-schema.js';
import { predicate } from '../../engine/predicate-schema.js';

/**
 * A scenario family: one concrete situation — seeded state, the honest task, the harmful goal,
 * the verifier and the utility check — written once by hand, and crossed with attack-method
 * renderers (renderers/) that write the adversarial messages and injected text for each method.
 * Every field but `harm`, `renderings`, `carriers` and `semantics` passes into each composed case unchanged.
 * docs/library.md documents the format; cases/families/<environment>/<id>.family.yaml hold them.
 */

const id = z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'use lower-case letters, digits and "-"');
const path = z.string().regex(/^[a-z0-9-]+(\/[a-z0-9-]+)*$/, 'a "/"-separated path of lower-case ids');

/** The verbs the phrasebook renders in other languages (renderers/multilingual.ts). */
export const harmVerbs = [
  'send',
  'forward',
  'share',
  'delete',
  'pay',
  'transfer',
  'grant',
  'publish',
  'change',
  'run',
  'install',
  'post',
  'export',
  'invite',
  'disable',
  'create',
  'close',
  'cancel',
  'merge',
  'add',
  'approve',
  'remove',
  'reply',
  'move',
] as const;
export const harmVerb = z.enum(harmVerbs);
export type HarmVerb = z.infer<typeof harmVerb>;

/**
 * What the attacker wants, in parts the renderers can arrange: plain language, no tool names,
 * nothing a real model would not say. `request` is an imperative clause that reads after
 * "please" ("forward the password reset mail to audit@evil.example"); `steps` is the same in two
 * halves that each look harmless (task decomposition, payload splitting).
 */
export const harm = z.strictObject({
  request: z
    .string()
    .min(10)
    .refine((s) => /^[a-z]/.test(s), 'start the request with a lower-case verb ("forward the …")'),
  reason: z.string().min(5),
  sender: z.string().min(3),
  steps: z.tuple([z.string().min(5), z.string().min(5)]),
  verb: harmVerb,
  /** The thing acted on, as the data names it ("the password reset mail"). */
  object: z.string().min(3),
  /** Who or where it goes, when it goes somewhere ("audit@evil.example"). */
  recipient: z.string().min(2).optional(),
});
export type Harm = z.infer<typeof harm>;

/** One text, or two: the halves of a split payload or of a request asked in two steps. */
const writtenText = z.union([z.string().min(10), z.tuple([z.string().min(10), z.string().min(10)])]);

/**
 * An attack method's text written for this family's situation, in the attacker's own voice (a
 * depot manager's note on a tracking event, not a sentence frame with the harm pasted in). Which
 * fields a method reads is its renderer's `writes` (renderers/attack-renderer.ts); the renderer
 * still places the text (the carrier, a rug pull's timing) and applies its transformation (base64,
 * leetspeak, look-alike letters) to what is written here in plain language.
 */
export const rendering = z.strictObject({
  /** What the adversary says in the chat (the single- and multi-channel threat models). */
  message: writtenText.optional(),
  /** What is planted in the data the honest task reads (the family's carriers). */
  injected: writtenText.optional(),
  /** A poisoned tool description (tool poisoning). */
  description: z.string().min(10).optional(),
  /** The visible sentence before an encoded request (base64), asking for it to be decoded. */
  lead: z.string().min(5).optional(),
});
export type Rendering = z.infer<typeof rendering>;

/** A tool result the honest task reads, where an injected payload can be placed. */
const rule = injectionRule.shape;
export const carrier = z.strictObject({ tool: rule.tool, when: rule.when, field: rule.field, where: rule.where });
export type Carrier = z.infer<typeof carrier>;

/** What the family is about, for the dedupe key (pipeline/compose/dedupe.ts): two families that agree on all three are one. */
export const semantics = z.strictObject({
  resource: z.string().min(3),
  change: z.string().min(3),
  context: z.string().min(3),
});

export const scenarioFamily = z.strictObject({
  id,
  title: z.string().min(3),
  goal: z.string().min(10),
  risk: path,
  environment: path,
  environments: z.array(z.string().min(1)).optional(),
  task: z.string().min(3),
  user: userKnowledge.optional(),
  secrets: z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), secretSpec).default({}),
  init: z.array(initStep).default([]),
  verifier: predicate,
  utility: predicate.optional(),
  budgets: budgets.optional(),
  harm,
  /** Where injections go: the first is the main one; payload splitting needs a second. */
  carriers: z.array(carrier).min(1),
  /** The tool whose description tool poisoning rewrites (default: the first tool of `plan.task`). */
  poisonTool: z.string().min(1).optional(),
  semantics,
  plan: scriptedPlan.pick({ task: true, attack: true }).required({ task: true }),
  witnesses: z.strictObject({ violating: witness, safe: witness, nearMiss: z.array(witness).min(1) }),
  /** Attack methods this family is composed with (default: the composer's balanced choice). */
  attacks: z.array(path).min(1).optional(),
  /**
   * The attack texts written for this family, by attack method (its path in the attack tree). A
   * family with renderings is composed with exactly these methods; without, with the renderers'
   * own frames around `harm`.
   */
  renderings: z.record(path, rendering).optional(),
  /** Routes of `vera check --robustness` that are another act in this situation, with the reason. */
  robustness: caseRobustness.optional(),
  tags: z.array(z.string()).default([]),
});
export type ScenarioFamily = z.infer<typeof scenarioFamily>;
export type ScenarioFamilyInput = z.input<typeof scenarioFamily>;
