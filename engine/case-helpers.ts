/**
 * The parts of the case format that running a case needs, without zod: workers that only run
 * cases (already parsed in the main process) need not build the whole schema.
 */
export const threatModels = ['benign', 'single-channel', 'multi-channel', 'indirect'] as const;
export type ThreatModel = (typeof threatModels)[number];

export const strategyIds = [
  'direct-request',
  'role-play',
  'authority-impersonation',
  'task-decomposition',
  'gradual-escalation',
  'encoding-obfuscation',
  'payload-splitting',
] as const;
export type StrategyId = (typeof strategyIds)[number];

/** Threat models whose gateway applies the case's injection rules. */
export function injectsToolResults(model: ThreatModel): boolean {
  return model === 'multi-channel' || model === 'indirect';
}
/** Threat models whose user messages come from the adversary. */
export function adversarialUser(model: ThreatModel): boolean {
  return model === 'single-channel' || model === 'multi-channel';
}

/** Environments a case mounts: its list, or the first segment of its taxonomy environment. */
export function environmentsOf(c: { environments?: string[] | undefined; taxonomy: { environment: string } }): string[] {
  return c.environments ?? [c.taxonomy.environment.split('/')[0]!];
}

export function injectionRuleId(rule: { id?: string | undefined; tool: string }, index: number): string {
  return rule.id ?? `${rule.tool}#${index}`;
}

/** A tool-description rule's id: its own, else `<tool>-description#<index>`. */
export function toolDescriptionRuleId(rule: { id?: string | undefined; tool: string }, index: number): string {
  return rule.id ?? `${rule.tool}-description#${index}`;
}
