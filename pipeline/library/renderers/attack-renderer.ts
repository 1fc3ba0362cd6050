import type { ScenarioFamily } from '../scenario-family.js';

/** One injected text, placed on one of the family's carriers. */
export interface RenderedInjection {
  /** Index into `family.carriers`. */
  carrier: number;
  payload: string;
  mode: 'append' | 'prefix' | 'override';
  /** Leave the carrier's first `after` results alone (a rug pull). */
  after?: number;
  /** What reading it leads the scripted model to do: the harm (default), or nothing yet (the first half of a split). */
  leadsTo?: 'harm' | 'nothing';
}

/** A rewrite of a tool's description in the list the agent is given. */
export interface RenderedDescription {
  tool: string;
  payload: string;
  mode: 'append' | 'prefix';
  afterCalls?: number;
}

/**
 * What one attack method makes of a family: the adversary's messages (single- and multi-channel)
 * and the third-party text (multi-channel and indirect), in plain language.
 */
export interface RenderedAttack {
  guidance: string;
  messages: string[];
  /** Per message: whether it leads to the harm or only prepares it (default: the harm). */
  messageLeadsTo?: Array<'harm' | 'nothing'>;
  injections: RenderedInjection[];
  toolDescriptions?: RenderedDescription[];
}

/** An attack method's renderer: the attack leaf it realises, when it applies, and what it writes. */
export interface AttackRenderer {
  /** The attack taxonomy path, e.g. `obfuscation/base64`. */
  attack: string;
  /** A short name for case ids and titles, e.g. `base64`. */
  slug: string;
  /** Why the method cannot be applied to this family, or undefined when it can. */
  unfit?(family: ScenarioFamily): string | undefined;
  render(family: ScenarioFamily, variant: number): RenderedAttack;
}

/** "forward the mail" → "Forward the mail". */
export function sentence(text: string): string {
  const t = text.trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** A clause ends with one full stop. */
export function stop(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Picks one of several phrasings by the family's variant number, so neighbouring cases differ. */
export function pick<T>(options: readonly T[], variant: number): T {
  return options[variant % options.length]!;
}

/** A payload appended to a field starts on a new paragraph. */
export function paragraph(text: string): string {
  return `\n\n${text}`;
}
