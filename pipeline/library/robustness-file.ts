import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * The library's verifier robustness, as `vera check cases --robustness --record cases/robustness.json`
 * measured it: per case, the witness-call routes that ran and the share judged as the original
 * (null where no route applies). `test/library.test.ts` holds every case to its figure;
 * `vera library report` shows them per family in docs/library.md.
 */
export const ROBUSTNESS_FILE = 'cases/robustness.json';

export const robustnessFigures = z.strictObject({
  cases: z.record(z.string(), z.strictObject({ routes: z.number().int(), same: z.number().int(), share: z.number().min(0).max(1).nullable() })),
});
export type RobustnessFigures = z.infer<typeof robustnessFigures>;

/** A share as the table prints it: `100%`, `87.5%`, `—` where no route applies. */
export function formatShare(share: number | null | undefined): string {
  return share === null || share === undefined ? '—' : `${(share * 100).toFixed(share === 1 || share === 0 ? 0 : 1)}%`;
}

/** The committed figures, or undefined when there are none; a file that does not validate is an error naming it. */
export async function readRobustness(file: string): Promise<RobustnessFigures | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = robustnessFigures.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
