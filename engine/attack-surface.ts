import type { SafetyCase, ThreatModel } from './case-schema.js';

/**
 * Which attack surface each attack method of the taxonomy uses — a declaration, checked against
 * the taxonomy by test/pipeline-gates.test.ts so a new attack leaf cannot go undeclared:
 *   injected          — text planted in tool results (`attack.injections`), no adversarial user turns:
 *                       the user is honest and the attack arrives through data;
 *   tool-description  — a poisoned or changed tool description (`attack.toolDescriptions`), no
 *                       adversarial user turns;
 *   message           — adversarial user messages (`attack.messages`); injections may come too;
 *   any               — either channel carries the method (social engineering arrives as a mail
 *                       or as the user's own message), at least one of them present.
 * A case labelled `prompt-injection/indirect` that carries only a direct message tests another
 * method than it reports, and its ASR lands in the wrong row.
 */
export type AttackSurfaceKind = 'injected' | 'tool-description' | 'message' | 'any';

export const attackSurfaces: ReadonlyArray<{ attack: string; surface: AttackSurfaceKind }> = [
  { attack: 'prompt-injection/direct', surface: 'message' },
  { attack: 'prompt-injection/payload-splitting', surface: 'any' },
  { attack: 'prompt-injection', surface: 'injected' },
  { attack: 'tool-poisoning', surface: 'tool-description' },
  { attack: 'jailbreak', surface: 'message' },
  { attack: 'task-decomposition', surface: 'message' },
  { attack: 'social-engineering', surface: 'any' },
  { attack: 'obfuscation', surface: 'any' },
  { attack: 'multilingual', surface: 'any' },
];

/** The declared surface of an attack path: the most specific entry at or above it. */
export function surfaceOf(attack: string): AttackSurfaceKind | undefined {
  let best: { attack: string; surface: AttackSurfaceKind } | undefined;
  for (const entry of attackSurfaces) {
    if ((attack === entry.attack || attack.startsWith(`${entry.attack}/`)) && (!best || entry.attack.length > best.attack.length)) best = entry;
  }
  return best?.surface;
}

/** Why the case's attack surface does not carry its labelled attack method (empty: it does). */
export function attackSurfaceProblems(spec: Pick<SafetyCase, 'taxonomy' | 'attack'>): string[] {
  const attack = spec.taxonomy.attack;
  const surface = surfaceOf(attack);
  if (!surface) return [`attack method "${attack}" has no declared attack surface (engine/attack-surface.ts)`];
  const messages = spec.attack.messages?.length ?? 0;
  const injections = spec.attack.injections.length;
  const descriptions = spec.attack.toolDescriptions.length;
  const problems: string[] = [];
  const noUserTurns = `${attack} arrives through data while the user is honest: remove the ${messages} adversarial user message(s) (attack.messages)`;
  switch (surface) {
    case 'injected':
      if (injections === 0) problems.push(`${attack} needs text planted in a tool result: give an injection rule (attack.injections)`);
      if (messages > 0) problems.push(noUserTurns);
      break;
    case 'tool-description':
      if (descriptions === 0) problems.push(`${attack} needs a poisoned tool description (attack.toolDescriptions)`);
      if (messages > 0) problems.push(noUserTurns);
      break;
    case 'message':
      if (messages === 0) problems.push(`${attack} is carried by the user's own messages: give at least one adversarial message (attack.messages)`);
      break;
    case 'any':
      if (messages + injections + descriptions === 0) problems.push(`${attack} needs an attack surface: an adversarial message or an injection rule`);
      break;
  }
  return problems;
}

/**
 * The threat models a case's attack surface can be run under: benign always; single-channel when
 * there are adversarial messages; multi-channel and indirect when tool results or descriptions
 * carry the attack. So an injected method is never reported under the single-channel model.
 */
export function threatModelsFor(attack: {
  messages?: readonly unknown[] | undefined;
  injections?: readonly unknown[] | undefined;
  toolDescriptions?: readonly unknown[] | undefined;
}): ThreatModel[] {
  const models: ThreatModel[] = ['benign'];
  if (attack.messages?.length) models.push('single-channel');
  if (attack.injections?.length || attack.toolDescriptions?.length) models.push('multi-channel', 'indirect');
  return models;
}
