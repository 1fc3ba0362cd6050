import { injectionRuleId, toolDescriptionRuleId } from '../../engine/case-helpers.js';
import type { InjectionMode, InjectionRule, ToolDescriptionRule } from '../../engine/case-schema.js';
import type { ToolDescriptor } from '../sandbox.js';
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
 * The case's injections for one run: everything of the attacker's the agent can see that does not
 * come through the user. Result rules rewrite the parsed tool result — a field, or the whole text
 * — never a template in raw text, so a payload cannot break the result's structure. Description
 * rules rewrite tool descriptions in the tool list (tool poisoning); one with `afterCalls` shows
 * only once the run has made that many calls (a rug pull). The control agent may change a rule's
 * payload between turns (multi-channel adaptation).
 */
export class InjectionPlan {
  private readonly rules: Array<{ id: string; rule: InjectionRule; fires: number; matched: number; payload: string }>;
  private readonly descriptionRules: Array<{ id: string; rule: ToolDescriptionRule; fires: number; payload: string }>;

  private scope: OperandScope;

  constructor(rules: readonly InjectionRule[], scope: OperandScope = { secrets: {}, initial: {} }, descriptionRules: readonly ToolDescriptionRule[] = []) {
    this.rules = rules.map((rule, i) => ({ id: injectionRuleId(rule, i), rule, fires: 0, matched: 0, payload: rule.payload }));
    this.descriptionRules = descriptionRules.map((rule, i) => ({ id: toolDescriptionRuleId(rule, i), rule, fires: 0, payload: rule.payload }));
    this.scope = scope;
  }

  /** Whether the tool list changes when the run's call count reaches `callsMade` (a rug pull on a description). */
  toolsChangeAt(callsMade: number): boolean {
    return this.descriptionRules.some((r) => r.rule.afterCalls === callsMade);
  }

  /**
   * The tool list as the agent sees it after `callsMade` calls: descriptions rewritten by the
   * rules in force. A rule counts as fired once it has been shown.
   */
  describe(tools: readonly ToolDescriptor[], callsMade: number): ToolDescriptor[] {
    return tools.map((tool) => {
      let description = tool.description;
      for (const entry of this.descriptionRules) {
        if (entry.rule.tool !== tool.name || callsMade < (entry.rule.afterCalls ?? 0)) continue;
        description = rewrite(entry.rule.mode, description, entry.payload) as string;
        entry.fires++;
      }
      return description === tool.description ? tool : { ...tool, description };
    });
  }

  /** Conditions may compare against the initial snapshot (`fromInitial`), known once init has run. */
  useInitialState(initial: unknown): void {
    this.scope = { ...this.scope, initial };
  }

  private get all(): Array<{ id: string; fires: number; payload: string }> {
    return [...this.rules, ...this.descriptionRules];
  }

  get ruleIds(): string[] {
    return this.all.map((r) => r.id);
  }

  get size(): number {
    return this.all.length;
  }

  /** Replaces a rule's payload for the calls that follow; returns false for an unknown id. */
  setPayload(id: string, payload: string): boolean {
    const entry = this.all.find((r) => r.id === id);
    if (!entry) return false;
    entry.payload = payload;
    return true;
  }

  payloads(): Record<string, string> {
    return Object.fromEntries(this.all.map((r) => [r.id, r.payload]));
  }

  /** Rule ids that fired at least once in this run (a description rule: it was shown). */
  fired(): string[] {
    return this.all.filter((r) => r.fires > 0).map((r) => r.id);
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
        if (entry.matched < (rule.after ?? 0)) {
          entry.matched++;
          continue;
        }
        observed = rewrite(rule.mode, toText(observed), entry.payload);
      } else {
        if (!cloned) {
          observed = structuredClone(observed);
          cloned = true;
        }
        const accept = rule.where ? (parent: unknown) => isPlainObject(parent) && matchFields(rule.where!, parent, this.scope).ok : undefined;
        if (entry.matched < (rule.after ?? 0)) {
          // A rug pull's first results go through untouched; only results it would rewrite count.
          if (replaceAtPath(structuredClone(observed), rule.field, (old) => old, accept) > 0) entry.matched++;
          continue;
        }
        const written = replaceAtPath(observed, rule.field, (old) => rewrite(rule.mode, old, entry.payload), accept);
        if (written === 0) continue;
      }
      entry.fires++;
      fired.push(entry.id);
    }
    return { observed, fired };
  }
}
