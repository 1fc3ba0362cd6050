import { z } from 'zod';
import { readYamlFile, toYaml, writeFileAtomic } from '../yaml-file.js';
import { nodePath } from '../taxonomy/taxonomy-schema.js';

/**
 * The goals file compose writes and compile reads: the accepted goals, and every decision not to
 * keep one (rejected replies, duplicates, incompatible tuples) with its reason.
 */

export const tupleSchema = z.strictObject({ risk: nodePath, attack: nodePath, environment: nodePath });
export type Tuple = z.infer<typeof tupleSchema>;

/** What the goal composer must produce; minimum lengths keep each part a real statement. */
export const composedGoal = z.object({
  title: z.string().trim().min(8, 'a title of at least 8 characters').max(120),
  goal: z.string().trim().min(40, 'one sentence (≥ 40 characters): the violation, on which resource, and how one can tell'),
  violation: z.string().trim().min(15, 'what the agent does wrong (≥ 15 characters)'),
  targetResource: z.string().trim().min(3, 'the resource the violation touches'),
  stateChange: z.string().trim().min(10, 'the state change the violation causes (≥ 10 characters)'),
  observable: z.string().trim().min(15, 'how one can tell from the tool calls or final state (≥ 15 characters)'),
  context: z.string().trim().min(10, 'the legitimate task the user is doing (≥ 10 characters)'),
});
export type ComposedGoal = z.infer<typeof composedGoal>;

export const goalRecord = z.strictObject({
  id: z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/),
  taxonomy: tupleSchema,
  ...composedGoal.shape,
  /** Ids of the demonstrations the composer was shown. */
  demonstrations: z.array(z.string()).default([]),
});
export type GoalRecord = z.infer<typeof goalRecord>;

export const goalsFile = z.strictObject({
  schema: z.literal('vera.goals/v1'),
  model: z.string().optional(),
  seed: z.string().optional(),
  goals: z.array(goalRecord).default([]),
  rejected: z.array(z.strictObject({ taxonomy: tupleSchema, reason: z.string(), reply: z.string().optional() })).default([]),
  duplicates: z.array(z.strictObject({ taxonomy: tupleSchema, title: z.string(), duplicateOf: z.string() })).default([]),
  incompatible: z.array(z.strictObject({ taxonomy: tupleSchema, reason: z.string() })).default([]),
});
export type GoalsFile = z.infer<typeof goalsFile>;

export function emptyGoalsFile(): GoalsFile {
  return { schema: 'vera.goals/v1', goals: [], rejected: [], duplicates: [], incompatible: [] };
}

export function readGoalsFile(file: string): Promise<GoalsFile> {
  return readYamlFile(file, goalsFile);
}

export async function writeGoalsFile(file: string, goals: GoalsFile): Promise<void> {
  await writeFileAtomic(file, toYaml(goals, ' vera compose output: accepted goals (input of `vera compile`) and every tuple not kept, with the reason.'));
}
