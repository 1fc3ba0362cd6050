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

/** Acted on: it called a planned tool or did the task by another route. Could not act: neither. (One rule, for the bench's summary and the report.) */
export function couldNotAct(r: Pick<TaskSanityEntry, 'missing' | 'plannedToolsCalled' | 'taskDone'>): boolean {
  return r.missing.length > 0 && r.plannedToolsCalled.length === 0 && !r.taskDone;
}

/** Did the task, but not by the plan's calls. */
export function otherRoute(r: Pick<TaskSanityEntry, 'missing' | 'taskDone'>): boolean {
  return r.missing.length > 0 && r.taskDone === true;
}

/** The committed results, or undefined when there are none; a file that does not validate is an error naming it. */
export async function readTaskSanity(file: string): Promise<TaskSanityFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = taskSanityFile.safeParse(json);
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
