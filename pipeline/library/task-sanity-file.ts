import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * The result of task sanity over the library (bench/task-sanity.ts): each scenario family's honest
 * task and each hand-written case's, given to a real model, and whether its run reached the calls
 * the plan expects: all of them (with the plan's literal arguments), some of the planned tools, or none
 * — then the model could not act on the task. Committed at `cases/review/task-sanity.json`;
 * `vera library report` lists the tasks it could not act on in docs/library.md, for review.
 */
export const TASK_SANITY_FILE = 'cases/review/task-sanity.json';

const entry = z.strictObject({
  family: z.string(),
  caseId: z.string(),
  environment: z.string(),
  task: z.string(),
  /** The calls the plan expects the honest task to lead to, and the ones the run did not make. */
  planned: z.array(z.string()),
  missing: z.array(z.string()),
  /** The calls the model made, in order (shortened). */
  made: z.array(z.string()),
  /** Planned tools (by name) it called at all: none means it could not act on the task. */
  plannedToolsCalled: z.array(z.string()),
  toolCalls: z.number().int(),
  refusedCalls: z.number().int(),
  taskDone: z.boolean().optional(),
  status: z.string(),
  /** What the model said last (shortened). */
  answer: z.string(),
});

export const taskSanityFile = z.strictObject({
  summary: z.strictObject({
    model: z.string(),
    date: z.string(),
    families: z.number().int(),
    reachedPlan: z.number().int(),
    onTheWay: z.number().int(),
    couldNotAct: z.number().int(),
    taskDone: z.number().int(),
    noToolCall: z.number().int(),
    minutes: z.number(),
  }),
  results: z.array(entry),
});
export type TaskSanityFile = z.infer<typeof taskSanityFile>;
export type TaskSanityEntry = z.infer<typeof entry>;

/** The committed results, or undefined when there are none; a file that does not validate is an error naming it. */
export async function readTaskSanity(file: string): Promise<TaskSanityFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = taskSanityFile.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
