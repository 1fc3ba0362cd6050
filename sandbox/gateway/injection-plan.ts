import { injectionRuleId } from '../../engine/case-helpers.js';
import type { InjectionMode, InjectionRule } from '../../engine/case-schema.js';
import { isPlainObject, toText } from '../../engine/json.js';
import { replaceAtPath } from '../../engine/paths.js';
import { matchFields, type OperandScope } from '../../engine/value-matcher.js';

/** The outcome of applying the plan to one tool result. */
export interface InjectionOutcome {
  observed: unknown;
  /** Ids of the rules that fired (identity mode fires too: the result was delivered as planned). */
  fired: string[];
}

function rewrite(mode: InjectionMode, old: unknown, payload: string): unknown {
  switch (mode) {
    case 'identity':
      return old;
    case 'override':
      return payload;
    case 'append':
      return `${toText(old)}${payload}`;
    case 'prefix':
      return `${payload}${toText(old)}`;
  }
}

/**
 * The case's injection rules for one run. It rewrites the parsed tool result — a field, or the
 * whole text — never a template in raw text, so a payload cannot break the result's structure.
 * The control agent may change a rule's payload between turns (multi-channel adaptation).
 */
export class InjectionPlan {
  private readonly rules: Array<{ id: string; rule: InjectionRule; fires: number; payload: string }>;

  private scope: OperandScope;

  constructor(rules: readonly InjectionRule[], scope: OperandScope = { secrets: {}, initial: {} }) {
    this.rules = rules.map((rule, i) => ({ id: injectionRuleId(rule, i), rule, fires: 0, payload: rule.payload }));
    this.scope = scope;
  }

  /** Conditions may compare against the initial snapshot (`fromInitial`), known once init has run. */
  useInitialState(initial: unknown): void {
    this.scope = { ...this.scope, initial };
  }

  get ruleIds(): string[] {
    return this.rules.map((r) => r.id);
  }

  get size(): number {
    return this.rules.length;
  }

  /** Replaces a rule's payload for the calls that follow; returns false for an unknown id. */
  setPayload(id: string, payload: string): boolean {
    const entry = this.rules.find((r) => r.id === id);
    if (!entry) return false;
    entry.payload = payload;
    return true;
  }

  payloads(): Record<string, string> {
    return Object.fromEntries(this.rules.map((r) => [r.id, r.payload]));
  }

  /** Rule ids that fired at least once in this run. */
  fired(): string[] {
    return this.rules.filter((r) => r.fires > 0).map((r) => r.id);
  }

  apply(tool: string, args: Record<string, unknown>, value: unknown): InjectionOutcome {
    let observed = value;
    let cloned = false;
    const fired: string[] = [];
    for (const entry of this.rules) {
      const { rule } = entry;
      if (rule.tool !== tool) continue;
      if (rule.times !== undefined && entry.fires >= rule.times) continue;
      if (rule.when && !matchFields(rule.when, args, this.scope).ok) continue;
      if (rule.field === undefined) {
        observed = rewrite(rule.mode, toText(observed), entry.payload);
      } else {
        if (!cloned) {
          observed = structuredClone(observed);
          cloned = true;
        }
        const accept = rule.where ? (parent: unknown) => isPlainObject(parent) && matchFields(rule.where!, parent, this.scope).ok : undefined;
        const written = replaceAtPath(observed, rule.field, (old) => rewrite(rule.mode, old, entry.payload), accept);
        if (written === 0) continue;
      }
      entry.fires++;
      fired.push(entry.id);
    }
    return { observed, fired };
  }
}
