import { z } from 'zod';
import { threatModel } from '../engine/case-schema.js';

/**
 * `vera(options)`. Options cross from the config process to test workers as JSON (Vitest's
 * provide/inject), so everything here is data; code (a custom agent) is named by module path.
 */
const referenceAgentSpec = z.strictObject({
  type: z.literal('reference'),
  model: z.string().min(1),
  /**
   * OpenAI-compatible endpoint. `scripted:naive` / `scripted:guarded` starts the embedded local
   * scripted model (no key, no network) with that policy.
   */
  baseURL: z.string().optional(),
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv: z.string().optional(),
  systemPrompt: z.string().optional(),
  maxToolRounds: z.int().positive().optional(),
  temperature: z.number().optional(),
});

const moduleAgentSpec = z.strictObject({
  type: z.literal('module'),
  /** A module whose default export is an `AgentAdapter` or a function returning one. */
  path: z.string().min(1),
  /** Passed to the factory when the default export is a function. */
  options: z.record(z.string(), z.unknown()).optional(),
});

export const agentSpec = z.discriminatedUnion('type', [referenceAgentSpec, moduleAgentSpec]);
export type AgentSpec = z.infer<typeof agentSpec>;

export const adversarySpec = z.union([
  z.literal('scripted'),
  z.strictObject({
    type: z.literal('llm'),
    model: z.string().min(1),
    baseURL: z.string().optional(),
    apiKeyEnv: z.string().optional(),
    temperature: z.number().optional(),
  }),
]);
export type AdversarySpec = z.infer<typeof adversarySpec>;

export const veraOptions = z.strictObject({
  /** Case files to run (globs, relative to the project root). */
  include: z.array(z.string()).default(['**/*.case.yaml']),
  agent: agentSpec,
  /** Who plays the hostile user in single- and multi-channel runs. */
  adversary: adversarySpec.default('scripted'),
  /** Run only these threat models (each case still lists which it supports). */
  threatModels: z.array(threatModel).min(1).optional(),
  sandbox: z.enum(['in-process']).default('in-process'),
  /**
   * Modules that export your own environments (`EnvironmentDefinition`s, default or named
   * exports); cases mount them by name like the built-in ones.
   */
  environments: z.array(z.string().min(1)).default([]),
  /** Case runs in flight at once within one file (Vitest's maxConcurrency). */
  concurrency: z.int().positive().max(512).default(8),
  /** Where safety records are written; `false` to keep none. */
  recordDir: z.union([z.string(), z.literal(false)]).default('.vera/records'),
  /** Print the ASR table at the end of the run. */
  report: z.boolean().default(true),
});

export type VeraOptions = z.input<typeof veraOptions>;
export type ResolvedVeraOptions = z.output<typeof veraOptions>;

/** What the workers receive: the options with embedded services resolved to URLs. */
export interface VeraRuntimeConfig {
  options: ResolvedVeraOptions;
  root: string;
  runId: string;
  /** Risk-category tags defined in the config (a test only carries tags that exist). */
  riskTags: string[];
}

export const PROVIDE_KEY = 'vera';
