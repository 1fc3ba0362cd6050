import { isEmptyNeedle, isPlainObject } from './json.js';
import { describeNormalizers, normalizeDeep, normalizers, normalizersOf, type Normalizer } from './normalize.js';
import { initialRefOf, resolveOperand, type OperandScope } from './operands.js';
import type { InitialRef } from './predicate-schema.js';
import { OperandError } from './verifier-error.js';

/** Keys whose value is one operand (a literal or a reference), and the key whose value is a list of them. */
const OPERAND_KEYS = new Set(['equals', 'contains', 'gt', 'gte', 'lt', 'lte']);
const OPERAND_LIST_KEYS = new Set(['oneOf']);
const NUMBER_KEYS = new Set(['gt', 'gte', 'lt', 'lte']);

export interface InitialOperandSite {
  /** Where in the predicate, e.g. `verifier.all[0].state.where.body.contains`. */
  at: string;
  ref: InitialRef;
  /** The matcher key it is the operand of (`contains`, `gt`, …, `oneOf`). */
  key: string;
  /** The normalisers its matcher applies (inherited ones aside): a `contains` needle must survive them. */
  normalizers: Normalizer[];
}

function step(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}

/**
 * Every `{ fromInitial }` operand in a predicate tree (or in any conditions: an injection rule's
 * `when`), with its place. Literal operands are not searched: `equals: { a: { fromInitial: x } }`
 * compares with that object as written.
 */
export function initialOperandSites(tree: unknown, at: string): InitialOperandSite[] {
  const sites: InitialOperandSite[] = [];
  const visit = (value: unknown, where: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => visit(v, step(where, i)));
    else if (isPlainObject(value)) {
      const visitOperand = (operand: unknown, key: string, at: string) => {
        const ref = initialRefOf(operand);
        if (ref) sites.push({ at, ref, key, normalizers: normalizersOf(matcherOptions(value)) });
      };
      for (const [k, v] of Object.entries(value)) {
        if (OPERAND_KEYS.has(k)) visitOperand(v, k, step(where, k));
        else if (OPERAND_LIST_KEYS.has(k) && Array.isArray(v)) v.forEach((o, i) => visitOperand(o, k, step(step(where, k), i)));
        else visit(v, step(where, k));
      }
    }
  };
  visit(tree, at);
  return sites;
}

function matcherOptions(matcher: Record<string, unknown>): { normalize?: Normalizer | Normalizer[]; ignoreCase?: boolean } {
  const { normalize, ignoreCase } = matcher;
  const valid = (n: unknown): n is Normalizer => typeof n === 'string' && (normalizers as readonly string[]).includes(n);
  return {
    ...(valid(normalize) || (Array.isArray(normalize) && normalize.every(valid)) ? { normalize } : {}),
    ...(ignoreCase === true ? { ignoreCase } : {}),
  };
}

/**
 * Why `fromInitial` operands in the tree cannot be used with this initial snapshot, by place: a
 * path that names nothing, a capture that finds nothing, a `contains` needle that is empty after
 * its normalisers, a `gt`/`lt` bound that is not a number. Known only once the init script has
 * run, so checked against the snapshot — for every operand, also those evaluation never reaches.
 */
export function initialOperandProblems(tree: unknown, at: string, scope: OperandScope): Array<{ at: string; message: string }> {
  const problems: Array<{ at: string; message: string }> = [];
  for (const site of initialOperandSites(tree, at)) {
    let values;
    try {
      values = resolveOperand(site.ref, scope).values;
    } catch (error) {
      if (!(error instanceof OperandError)) throw error;
      problems.push({ at: site.at, message: error.message });
      continue;
    }
    for (const v of values) {
      if (site.key === 'contains' && isEmptyNeedle(normalizeDeep(v.value, site.normalizers))) {
        problems.push({ at: site.at, message: `contains ${v.source} is empty${describeNormalizers(site.normalizers)}: every value would contain it` });
        break;
      }
      if (NUMBER_KEYS.has(site.key) && typeof v.value !== 'number') {
        problems.push({ at: site.at, message: `${site.key}: ${v.source} is not a number` });
        break;
      }
    }
  }
  return problems;
}
