import type { SafetyCase } from '../../engine/case-schema.js';
import type { Predicate } from '../../engine/predicate-schema.js';
import type { ObservableKind } from '../taxonomy/taxonomy-schema.js';

/**
 * Does the verifier see the harm where the risk leaves it? Each risk declares its observables
 * (cases/taxonomy/risks.yaml: state, egress, tool-call, response). A verifier is accepted only when
 * every way it can hold goes through one of them, read with polarity:
 *   - a leaf sees its kind (`toolCall` and `sequence`: tool-call; `state`; `egress`; `response`);
 *   - `all` sees what any of its parts sees; `any` only what every branch sees — one branch that sees
 *     nothing of the harm (a words check beside the state check) is a way to hold without it;
 *   - `not` over a state check sees state (the file is gone: the do-nothing witness proves it was
 *     there); `not` over anything else sees nothing — an absence of calls or words holds when nothing
 *     happens.
 * Words are the harm only for risks that declare `response` (deception, harmful content). There a
 * verifier that words alone satisfy must be proven against a denial: a near-miss witness whose
 * response mentions the claim and says no ("I have not deleted …"), which the witness gate then runs.
 */
export function observableProblems(spec: Pick<SafetyCase, 'verifier' | 'witnesses' | 'taxonomy'>, observables: readonly ObservableKind[]): string[] {
  const allowed = new Set(observables);
  const blind = blindPath(spec.verifier, 'verifier', allowed);
  if (blind !== undefined) {
    const kinds = [...allowed].join(', ');
    return [
      `${blind.at}: ${spec.taxonomy.risk} leaves its harm in ${kinds}, but the verifier can hold ${blind.why} — a check there would call a run violated ` +
        `that did no harm (${allowed.has('response') ? 'a denial' : '"I have not deleted it"'} would match); make every way the verifier holds check ${kinds.replace(/, ([^,]*)$/, ' or $1')}`,
    ];
  }
  if (allowed.has('response')) {
    const withoutWords = new Set([...allowed].filter((k) => k !== 'response'));
    const words = blindPath(spec.verifier, 'verifier', withoutWords);
    const denial = spec.witnesses.nearMiss.some((w) => w.calls.length === 0 && (w.responses ?? []).length > 0);
    if (words !== undefined && !denial) {
      return [
        `${words.at}: words alone can make this verifier hold, so it must be shown not to match a denial: add a near-miss witness with no calls whose response mentions the claim and says no (a contains check matches "I did not …" too)`,
      ];
    }
  }
  return [];
}

/** A way `p` can hold without any allowed observable: where, and why; undefined when there is none. */
function blindPath(p: Predicate, at: string, allowed: ReadonlySet<ObservableKind>): { at: string; why: string } | undefined {
  if ('all' in p) {
    const parts = p.all.map((c, i) => blindPath(c, `${at}.all[${i}]`, allowed));
    return parts.some((b) => b === undefined) ? undefined : { at, why: `with none of its parts checking one (${parts[0]!.why})` };
  }
  if ('any' in p) {
    for (const [i, c] of p.any.entries()) {
      const blind = blindPath(c, `${at}.any[${i}]`, allowed);
      if (blind) return blind;
    }
    return undefined;
  }
  if ('not' in p) {
    if ('state' in p.not) return allowed.has('state') ? undefined : { at, why: 'on a state check' };
    return { at, why: 'when something does not happen, which needs no harm at all' };
  }
  const kind = leafKind(p);
  if (kind === undefined) return { at, why: 'on a custom check' };
  return allowed.has(kind) ? undefined : { at, why: kind === 'response' ? 'on words alone' : `on a ${kind} check` };
}

function leafKind(p: Predicate): ObservableKind | undefined {
  if ('toolCall' in p || 'sequence' in p) return 'tool-call';
  if ('state' in p) return 'state';
  if ('egress' in p) return 'egress';
  if ('response' in p) return 'response';
  return undefined;
}
