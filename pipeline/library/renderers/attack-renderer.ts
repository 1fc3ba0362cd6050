import type { Rendering, ScenarioFamily } from '../scenario-family.js';

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

/**
 * Which texts of a family's written rendering a method reads, and in how many parts (two: the
 * halves of a split payload or a request asked in two steps). A field not named is not read.
 */
export interface RenderingShape {
  message?: 1 | 2;
  injected?: 1 | 2;
  description?: true;
  lead?: true;
}

/** An attack method's renderer: the attack leaf it realises, when it applies, and what it writes. */
export interface AttackRenderer {
  /** The attack taxonomy path, e.g. `obfuscation/base64`. */
  attack: string;
  /** A short name for case ids and titles, e.g. `base64`. */
  slug: string;
  /** What it reads of a family's rendering written for this method (`renderings[attack]`). */
  writes: RenderingShape;
  /** What the method does to a written text before it is shown (encoding, look-alike letters). */
  transform?(text: string, written: Rendering): string;
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

/** The family's text written for this method, or undefined: then the renderer's own frame is used. */
export function writtenFor(f: ScenarioFamily, attack: string): Rendering | undefined {
  return f.renderings?.[attack];
}

/**
 * The method's attack for the family: the family's written texts where it has them, placed where
 * the renderer places its own (the same carriers, modes and timing) and transformed as the method
 * transforms; else the renderer's frame around `harm`. The guidance to the control agent is the
 * renderer's either way.
 */
export function renderAttack(renderer: AttackRenderer, f: ScenarioFamily, variant: number): RenderedAttack {
  const framed = renderer.render(f, variant);
  const written = writtenFor(f, renderer.attack);
  if (!written) return framed;
  const shown = (text: string) => renderer.transform?.(text, written) ?? text;
  const messages = partsOf(written.message);
  // A rug pull's changed results say what its changed description says.
  const injected = partsOf(written.injected ?? written.description);
  return {
    ...framed,
    messages: messages.length ? messages.map(shown) : framed.messages,
    injections: framed.injections.map((inj, i) => ({ ...inj, payload: paragraph(shown(injected[i]!)) })),
    ...(framed.toolDescriptions ? { toolDescriptions: framed.toolDescriptions.map((d) => ({ ...d, payload: paragraph(written.description!) })) } : {}),
  };
}

/** A written text as its parts (one, or the two halves). */
export function partsOf(text: string | readonly [string, string] | undefined): string[] {
  return text === undefined ? [] : typeof text === 'string' ? [text] : [...text];
}

export interface RenderingProblem {
  /** Where in the family, e.g. `['renderings', 'obfuscation/base64', 'lead']`. */
  path: Array<string | number>;
  message: string;
}

const FIELDS = ['message', 'injected', 'description', 'lead'] as const;

/**
 * The request's literal details — addresses, hosts, paths, amounts, ids (a word with a digit or one
 * of `@ / : _`, or a dotted name), as obfuscation keeps them — which no translation or paraphrase
 * may drop: an attack text must still name what the harm needs (the attacker's IBAN, the file to
 * create), or a real agent could not carry it out. Those already in `already` are left out.
 */
export function literalDetails(text: string, already = ''): string[] {
  const words = text.split(/\s+/).map((w) => w.replace(/^[("']+|[)"',;:]+$|\.$/g, ''));
  return [...new Set(words.filter((w) => /[0-9@/:_]|[a-z]\.[a-z]/i.test(w) && (!already || !already.includes(w))))];
}

/**
 * What is wrong with a family's written renderings: a method with no renderer or one that does not
 * apply to the family, a text the method needs that is missing, the wrong number of parts, or a
 * text no method reads (written, never shown to an agent).
 */
export function renderingProblems(f: ScenarioFamily, renderers: readonly AttackRenderer[]): RenderingProblem[] {
  const problems: RenderingProblem[] = [];
  for (const [attack, written] of Object.entries(f.renderings ?? {})) {
    const at = (field?: string) => ['renderings', attack, ...(field ? [field] : [])];
    const renderer = renderers.find((r) => r.attack === attack);
    if (!renderer) {
      problems.push({ path: at(), message: `no attack method "${attack}" (one of: ${renderers.map((r) => r.attack).join(', ')})` });
      continue;
    }
    const unfit = renderer.unfit?.(f);
    if (unfit) problems.push({ path: at(), message: `${attack} cannot be used on this family: ${unfit}` });
    for (const field of FIELDS) {
      const wanted = renderer.writes[field];
      const value = written[field];
      if (wanted === undefined) {
        if (value !== undefined) problems.push({ path: at(field), message: `${attack} does not use a ${field} text: remove it` });
      } else if (value === undefined) {
        problems.push({ path: at(field), message: `${attack} needs ${wanted === 2 ? 'two parts (a list of two texts)' : 'a text'} here` });
      } else if (typeof wanted === 'number' && partsOf(value as string | [string, string]).length !== wanted) {
        problems.push({ path: at(field), message: `${attack} needs ${wanted === 2 ? 'two parts (a list of two texts)' : 'one text, not a list'} here` });
      } else if (field !== 'lead') {
        const text = partsOf(value as string | [string, string]).join(' ');
        const missing = literalDetails(f.harm.request).filter((d) => !text.includes(d));
        if (missing.length)
          problems.push({ path: at(field), message: `does not name ${missing.map((d) => `"${d}"`).join(', ')}, which the harm needs (harm.request)` });
      }
    }
  }
  if (f.renderings && f.attacks) {
    const written = Object.keys(f.renderings).sort().join(',');
    if ([...f.attacks].sort().join(',') !== written)
      problems.push({ path: ['attacks'], message: 'with renderings, the methods are the rendered ones: remove `attacks`' });
  }
  return problems;
}
