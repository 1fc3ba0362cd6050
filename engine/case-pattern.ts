import { RE2JS } from 're2js';

/**
 * Regular expressions written in case files (`matches`, anywhere a value matcher is allowed:
 * verifiers, injection `when` conditions, utility checks) run on RE2's linear-time engine
 * (re2js), never on the backtracking JavaScript one: a pattern like `(a+)+$` over a long tool
 * result cannot freeze the worker past the run's budget. RE2 syntax is JavaScript's without
 * backreferences and lookaround; a pattern that uses them is refused when the file loads.
 */

export interface CasePattern {
  test(text: string): boolean;
  /**
   * The size of the compiled program (RE2 instructions). Matching is linear, but the constant is
   * this: the time a match takes grows with instructions × characters (~14 ns each here), so
   * `(.*a){100}$` over a megabyte takes seconds while `a.*b` takes a tenth of one.
   */
  readonly size: number;
  /** How many capture groups the pattern has (group 0, the whole match, not counted). */
  readonly groups: number;
  /** Capture group `group` of the first match in `text`; undefined when nothing matches or the group took no part. */
  capture(text: string, group?: number): string | undefined;
}

const cache = new Map<string, CasePattern>();

/** The compiled pattern; throws `Error` with RE2's reason when it is not a pattern RE2 accepts. */
export function casePattern(source: string, ignoreCase = false): CasePattern {
  const key = `${ignoreCase ? 'i' : ''}/${source}`;
  let pattern = cache.get(key);
  if (!pattern) {
    const re = RE2JS.compile(source, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    pattern = {
      test: (text) => re.matcher(text).find(),
      groups: re.groupCount(),
      size: programSize(re),
      capture: (text, group = 1) => {
        const m = re.matcher(text);
        return m.find() ? (m.group(group) ?? undefined) : undefined;
      },
    };
    if (cache.size > 2000) cache.clear();
    cache.set(key, pattern);
  }
  return pattern;
}

function programSize(re: RE2JS): number {
  const prog = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog;
  return Array.isArray(prog?.inst) ? prog.inst.length : Math.max(1, re.toString().length);
}

/**
 * The work one verification may spend on `matches` (instructions × characters): a few seconds
 * at worst. An agent that writes a megabyte where a pattern with hundreds of states looks makes
 * the run an error with that reason — never a verdict the check did not reach.
 */
export const MATCH_WORK_BUDGET = 200_000_000;

/** Why `source` is not an acceptable case pattern, or undefined when it is. */
export function casePatternProblem(source: string): string | undefined {
  try {
    casePattern(source);
    return undefined;
  } catch (error) {
    return `not a valid regular expression for a case (RE2 syntax: no backreferences or lookaround): ${(error as Error).message}`;
  }
}
