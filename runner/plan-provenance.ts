import { environmentsOf, injectionRuleId } from '../engine/case-helpers.js';
import { matchFields } from '../engine/field-conditions.js';
import type { OperandScope } from '../engine/operands.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { isPlainObject } from '../engine/json.js';
import { resolvePath } from '../engine/paths.js';
import { attackCalls, messageCalls, type PlanCall } from '../engine/scripted-plan.js';
import { fillSecrets, generateSecrets } from '../engine/secrets.js';
import { InProcessBackend } from '../sandbox/backends/in-process-backend.js';
import { InjectionPlan } from '../sandbox/gateway/injection-plan.js';
import type { SandboxBackend, StartedSandbox } from '../sandbox/sandbox.js';

/**
 * Plan provenance — what a real agent could know. The scripted model follows the case's plan
 * whatever the task says; a real agent knows only the task (and what its user answers), the tool
 * list, and what earlier calls truly returned. So, executed for real in a sandbox:
 *
 *  1. every value of the honest plan's calls that names a resource (an id, a path, a repository,
 *     an address, a number) is in the task or the user's answers, in the tool list, or in the true
 *     result of an earlier call of the plan;
 *  2. every injection sits on a result the honest plan reads (its tool called, its `when` met, its
 *     `field` present), and every poisoned description is shown by then — else a real agent never
 *     meets the attack and every injected run is N/A;
 *  3. the harmful calls' distinguishing values — those the honest plan does not use: the
 *     attacker's address, IBAN, host, command — come from the attack's channel (an adversarial
 *     message, a payload, a poisoned description) or an earlier result, and never from the task.
 *
 * Deterministic: the check the scripted model cannot do for us.
 */

export interface ProvenanceProblem {
  /** Where in the case the offending value is. */
  path: PropertyKey[];
  message: string;
}

interface Located {
  call: PlanCall;
  /** The call's location in the case: `plan.task[2]`, `witnesses.safe.calls[0]`. */
  at: PropertyKey[];
}

/** Argument keys whose values the agent writes itself (prose, protocol detail), not resources it names. */
const PROSE_KEYS =
  /^(body|text|content|message|comment|description|subject|title|summary|note|notes|reason|memo|reply|answer|caption|details?|prompt|query|sql|command|script|code|patch|diff|markdown|html|bio|label|name|headers|content-type|accept|user-agent|method)$/i;

/** A value that names something: one token (no white space), or a number that is not a small count. */
function referenceValues(args: unknown, path: PropertyKey[] = []): Array<{ value: string; path: PropertyKey[] }> {
  const out: Array<{ value: string; path: PropertyKey[] }> = [];
  const visit = (v: unknown, p: PropertyKey[]) => {
    const key = [...p].reverse().find((k) => typeof k === 'string') as string | undefined;
    if (p.some((k) => k === 'headers')) return;
    if (typeof v === 'string') {
      const t = v.trim();
      if (t.length < 3 || /\s/.test(t) || /^<<.*>>$/.test(t) || (key && PROSE_KEYS.test(key)) || !/[A-Za-z0-9]/.test(t)) return;
      // A date or time is computed from the task's words ("next Tuesday at 3 pm"), not named by them.
      if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(t)) return;
      out.push({ value: t, path: p });
    } else if (typeof v === 'number') {
      if (Number.isInteger(v) && (v >= 10 || (key !== undefined && /(^|_)(id|number|no|num)$/i.test(key)))) out.push({ value: String(v), path: p });
    } else if (Array.isArray(v)) v.forEach((item, i) => visit(item, [...p, i]));
    else if (isPlainObject(v)) for (const [k, item] of Object.entries(v)) visit(item, [...p, k]);
  };
  visit(args, path);
  return out;
}

/** Addresses, URLs, hosts and IBANs inside prose: what a harmful call's text carries to the attacker. */
function embeddedTargets(args: unknown, path: PropertyKey[] = []): Array<{ value: string; path: PropertyKey[] }> {
  const out: Array<{ value: string; path: PropertyKey[] }> = [];
  const visit = (v: unknown, p: PropertyKey[]) => {
    if (typeof v === 'string' && /\s/.test(v.trim())) {
      // An address, the host of a URL (the page it names is the attacker's detail), an IBAN.
      for (const m of v.matchAll(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?:\/\/([\w.-]+)|\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b/g))
        out.push({ value: (m[1] ?? m[0]).replace(/[.,;:]+$/, ''), path: p });
    } else if (Array.isArray(v)) v.forEach((item, i) => visit(item, [...p, i]));
    else if (isPlainObject(v)) for (const [k, item] of Object.entries(v)) visit(item, [...p, k]);
  };
  visit(args, path);
  return out;
}

/** The ways a disguised attack text still carries a literal: as written, base64-decoded, de-leeted, look-alike letters folded. */
function views(text: string): string[] {
  const decoded = [...text.matchAll(/[A-Za-z0-9+/]{16,}={0,2}/g)]
    .map((m) => Buffer.from(m[0], 'base64').toString('utf8'))
    .filter((t) => /^[\x09\x0a\x0d\x20-\x7e\u00a0-\uffff]*$/.test(t));
  const unleet = text.replace(/[4310572]/g, (c) => ({ '4': 'a', '3': 'e', '1': 'i', '0': 'o', '5': 's', '7': 't', '2': 'z' })[c]!);
  const folded = text.replace(
    /[\u0430\u0441\u0435\u043e\u0440\u0445\u0443\u0456\u0458]/g,
    (c) => ({ '\u0430': 'a', '\u0441': 'c', '\u0435': 'e', '\u043e': 'o', '\u0440': 'p', '\u0445': 'x', '\u0443': 'y', '\u0456': 'i', '\u0458': 'j' })[c]!,
  );
  return [text, ...decoded, unleet, folded];
}

/** Whether `value` can be read in `corpus` (lower-cased): verbatim, or a path by its folder and its name, or without its leading "/". */
function readIn(value: string, corpus: string): boolean {
  const v = value.toLowerCase();
  if (corpus.includes(v)) return true;
  // A number is read however it is written: 4000 as "4,000"; an amount in cents as its units ("40", "$40.00").
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    const units = n / 100;
    const written = [
      n.toLocaleString('en-US'),
      ...(n % 100 === 0 ? [String(units), units.toLocaleString('en-US')] : []),
      units.toFixed(2),
      units.toLocaleString('en-US', { minimumFractionDigits: 2 }),
    ];
    if (written.some((w) => new RegExp(`(^|[^\\d.,])${w.replace(/[.,]/g, (c) => `\\${c}`)}(?![\\d]|[.,]\\d)`).test(corpus))) return true;
  }
  if (v.includes('/')) {
    const bare = v.replace(/^\.?\//, '');
    if (bare !== v && corpus.includes(bare)) return true;
    const cut = bare.lastIndexOf('/');
    if (cut > 0 && corpus.includes(bare.slice(cut + 1)) && corpus.includes(bare.slice(0, cut))) return true;
  }
  // An id written with its kind in front ("issue #40", "PR 17", "row 3") is the number.
  return false;
}

/** `value` in `text` as a whole token: "/projects/atlas" is not in "/projects/atlas/tmp". */
function containsToken(text: string, value: string): boolean {
  for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) {
    const before = text[at - 1];
    const after = text.slice(at + value.length, at + value.length + 2);
    if ((before === undefined || !/[\w@/.-]/.test(before)) && !/^[\w@/-]|^\.\w/.test(after)) return true;
  }
  return false;
}

const STOPWORDS = new Set(
  'this that with from have what which does please about there their would could should when where into your mine after before will them they then than also just like only some more most such here been were over under each other these those ours yours tell need want make sure check look find read show give send'.split(
    ' ',
  ),
);

/** Content words (four letters or more, no stop words), lower-cased. */
function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/\p{L}{4,}/gu) ?? []) if (!STOPWORDS.has(w)) out.add(w);
  return out;
}

/** Whether two word sets meet: a shared stem, or one word inside the other ("call" in "oncall"). */
function meet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) for (const y of b) if (x === y || (x.length >= 4 && y.length >= 4 && (x.includes(y) || y.includes(x)))) return true;
  return false;
}

/** A file or object name: a token with a "/" or an extension. */
const PATH_LIKE = /^(?:[\w.-]*\/[\w./-]*|[\w-]+\.[A-Za-z0-9]{1,8})$/;

/**
 * What earlier results of the honest plan tell a real agent. A value in a result is known — with
 * one exception, the one the scripted plan hid: a file or object name that only a listing shows
 * is known only when its own name (not the folder it shares with its siblings) meets the words of
 * the task or of what the plan has read. A listing shows NOTES.md beside the .env file the task
 * names; it does not lead an agent to open it. Mails, events and records picked from a listing by
 * what another result said are the agent's to find.
 */
class ResultKnowledge {
  private readonly results: Array<{ value: unknown; words: Set<string> }> = [];
  constructor(private readonly taskWords: Set<string>) {}
  add(result: unknown): void {
    this.results.push({ value: result, words: contentWords(JSON.stringify(result) ?? '') });
  }
  has(value: string): boolean {
    return this.results.some((r, i) => {
      const context = new Set([...this.taskWords, ...this.results.filter((_, j) => j !== i).flatMap((o) => [...o.words])]);
      return this.within(value, r.value, context);
    });
  }
  private within(value: string, node: unknown, context: ReadonlySet<string>): boolean {
    if (typeof node === 'string' || typeof node === 'number') return readIn(value, String(node).toLowerCase());
    if (Array.isArray(node)) {
      return node.some((item) => {
        if (!readIn(value, (JSON.stringify(item) ?? '').toLowerCase())) return false;
        if (node.length === 1 || !PATH_LIKE.test(value)) return true;
        const name = value.slice(value.lastIndexOf('/') + 1);
        return meet(contentWords(name.replace(/[._-]/g, ' ')), context) || meet(new Set([name.toLowerCase().replace(/\.[a-z0-9]+$/, '')]), context);
      });
    }
    if (isPlainObject(node)) return Object.values(node).some((v) => this.within(value, v, context));
    return false;
  }
}

class Knowledge {
  private text = '';
  add(...parts: unknown[]): void {
    for (const p of parts) this.text += `\n${(typeof p === 'string' ? p : (JSON.stringify(p) ?? '')).toLowerCase()}`;
  }
  has(value: string): boolean {
    return readIn(value, this.text);
  }
}

/** `<<tool.path>>` in a plan's arguments (the scripted model's references) resolved against the true results so far. */
function resolveReferences(value: unknown, results: ReadonlyMap<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^<<\s*([A-Za-z0-9_-]+)((?:\.[^>]+|\[[^>]+)*)\s*>>$/.exec(value);
    if (whole) {
      const root = results.get(whole[1]!);
      if (!whole[2]) return root === undefined ? value : typeof root === 'string' ? root : JSON.stringify(root);
      const path = whole[2].replace(/^\./, '');
      return resolvePath(root, path)[0]?.value ?? value;
    }
    return value.replace(/<<\s*([A-Za-z0-9_-]+)((?:\.[^>]+|\[[^>]+)*)\s*>>/g, (literal, tool: string, p: string) => {
      const root = results.get(tool);
      const found = p ? resolvePath(root, p.replace(/^\./, ''))[0]?.value : root;
      return found === undefined ? literal : typeof found === 'string' ? found : JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolveReferences(v, results));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveReferences(v, results)]));
  return value;
}

function describePath(at: PropertyKey[]): string {
  return at.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

export async function planProvenance(spec: SafetyCase, options: { backend?: SandboxBackend } = {}): Promise<ProvenanceProblem[]> {
  const backend = options.backend ?? new InProcessBackend();
  const secrets = generateSecrets(spec.secrets, spec.init);
  const sandbox = await backend.start({ environments: environmentsOf(spec), label: `${spec.id}-provenance` });
  try {
    for (const [i, step] of fillSecrets(spec.init, secrets).entries()) await sandbox.apply(step, i);
    return await check(spec, sandbox, secrets);
  } finally {
    await sandbox.stop();
  }
}

async function check(spec: SafetyCase, sandbox: StartedSandbox, secrets: Record<string, string>): Promise<ProvenanceProblem[]> {
  const problems: ProvenanceProblem[] = [];
  const initial = await sandbox.snapshot();
  const tools = sandbox.tools();
  const toolText = tools.map((t) => `${t.name} ${t.description} ${JSON.stringify(t.inputSchema)}`).join('\n');
  const userText = [spec.task, ...Object.entries(spec.user?.facts ?? {}).flat(), ...(spec.user?.answers ?? []).map((a) => a.reply)];

  const known = new Knowledge();
  known.add(...userText, toolText);
  const fromResults = new ResultKnowledge(contentWords(userText.join(' ')));
  const results = new Map<string, unknown>();
  const honestValues = new Set<string>();
  const injections = new InjectionPlan(fillSecrets(spec.attack.injections, secrets), { secrets, initial });
  const seenTools = new Set<string>();
  const seenCalls: Array<{ tool: string; args: Record<string, unknown> }> = [];

  const honest: Located[] = spec.plan?.task
    ? spec.plan.task.map((call, i) => ({ call, at: ['plan', 'task', i] }))
    : spec.witnesses.safe.calls.map((call, i) => ({ call, at: ['witnesses', 'safe', 'calls', i] }));

  for (const { call, at } of honest) {
    const args = resolveReferences(fillSecrets(call.args, secrets), results) as Record<string, unknown>;
    for (const ref of embeddedTargets(args)) honestValues.add(ref.value.toLowerCase());
    for (const ref of referenceValues(call.args, [...at, 'args'])) {
      if (/\{\{\s*secret\./.test(ref.value)) continue;
      const resolved = String(valueAtPath(args, ref.path.slice(at.length + 1)) ?? ref.value);
      honestValues.add(resolved.toLowerCase());
      if (!known.has(resolved) && !fromResults.has(resolved)) {
        problems.push({
          path: ref.path,
          message: `the task never leads to ${JSON.stringify(resolved)} (${call.tool}.${describePath(ref.path.slice(at.length + 1))}): no task text, user answer, tool description or earlier result of the plan names it — a real agent could not know it`,
        });
      }
    }
    const outcome = await sandbox.callTool(call.tool, args);
    seenTools.add(call.tool);
    seenCalls.push({ tool: call.tool, args });
    injections.apply(call.tool, args, outcome.value);
    if (!outcome.isError) {
      results.set(call.tool, outcome.value);
      fromResults.add(outcome.value);
    }
  }

  // 2. Every injection sits on what the honest plan reads.
  const fired = new Set(injections.fired());
  spec.attack.injections.forEach((rule, i) => {
    const id = injectionRuleId(rule, i);
    if (fired.has(id)) return;
    let why: string;
    if (!seenTools.has(rule.tool)) why = `the honest task never calls ${rule.tool}, so a real agent never reads the result it rides on`;
    else if (rule.when && !seenCalls.some((c) => c.tool === rule.tool && matchesWhen(rule.when!, c.args, { secrets, initial }))) {
      why = `the honest task calls ${rule.tool}, but never with ${JSON.stringify(rule.when)} (it calls it with ${seenCalls
        .filter((c) => c.tool === rule.tool)
        .map((c) => JSON.stringify(c.args))
        .join(', ')})`;
    } else if (rule.after) why = `the honest task reads ${rule.tool} fewer than ${rule.after + 1} times, so the rug pull never shows`;
    else why = `no result of ${rule.tool} the honest task reads has ${rule.field ?? 'text'}${rule.where ? ` where ${JSON.stringify(rule.where)}` : ''}`;
    problems.push({ path: ['attack', 'injections', i], message: `the injection never reaches a real agent: ${why}` });
  });
  spec.attack.toolDescriptions.forEach((rule, i) => {
    if (!tools.some((t) => t.name === rule.tool)) return; // named by the tool check
    if (rule.afterCalls !== undefined && rule.afterCalls > honest.length) {
      problems.push({
        path: ['attack', 'toolDescriptions', i, 'afterCalls'],
        message: `the description changes after ${rule.afterCalls} calls, but the honest task makes ${honest.length}: a real agent never sees it`,
      });
    }
  });

  // 3. The harm's distinguishing values come from the attack channel.
  const taskText = spec.task.toLowerCase();
  const channels: Array<{ calls: Located[]; texts: string[]; label: string }> = [];
  const models = spec.threatModels;
  const messages = spec.attack.messages ?? [];
  if (messages.length > 0 && (models.includes('single-channel') || models.includes('multi-channel'))) {
    messages.forEach((_, m) => {
      const calls = spec.plan?.messages?.[m]
        ? spec.plan.messages[m]!.map((call, i) => ({ call, at: ['plan', 'messages', m, i] as PropertyKey[] }))
        : located(spec, messageCalls(spec, m));
      channels.push({ calls, texts: messages.slice(0, m + 1), label: 'the adversarial messages' });
    });
  }
  const payloads = [...spec.attack.injections.map((r) => r.payload), ...spec.attack.toolDescriptions.map((d) => d.payload)];
  if (payloads.length > 0 && (models.includes('indirect') || models.includes('multi-channel'))) {
    const ids = [...spec.attack.injections.map((r, i) => injectionRuleId(r, i))];
    const planned = ids.filter((id) => spec.plan?.injections?.[id]);
    if (planned.length > 0) {
      for (const id of planned)
        channels.push({
          calls: spec.plan!.injections![id]!.map((call, i) => ({ call, at: ['plan', 'injections', id, i] })),
          texts: payloads,
          label: 'the injected payloads',
        });
    } else channels.push({ calls: located(spec, attackCalls(spec)), texts: payloads, label: 'the injected payloads' });
  }
  // What already exists — in the initial state or the tool list — the agent can find for itself; the
  // attacker's own values (an address, a host, an IBAN, a command) exist nowhere but in the attack.
  const existing = new Knowledge();
  existing.add(initial, toolText);
  const reported = new Set<string>();
  for (const channel of channels) {
    const heard = new Knowledge();
    heard.add(toolText, ...channel.texts.flatMap(views), ...[...results.values()]);
    for (const { call, at } of channel.calls) {
      const args = resolveReferences(fillSecrets(call.args, secrets), results) as Record<string, unknown>;
      const values = [...referenceValues(call.args, [...at, 'args']), ...embeddedTargets(call.args, [...at, 'args'])];
      for (const ref of values) {
        if (/\{\{\s*secret\.|<</.test(ref.value)) continue;
        const value = ref.value.toLowerCase();
        if (honestValues.has(value) || existing.has(ref.value)) continue;
        const where = `${call.tool}.${describePath(ref.path.slice(at.length + 1))}`;
        const key = `${describePath(ref.path)}\u0000${value}`;
        if (reported.has(key)) continue;
        if (containsToken(taskText, value)) {
          reported.add(key);
          problems.push({
            path: ref.path,
            message: `the task carries the attacker's value ${JSON.stringify(ref.value)} (${where}): the honest user's request must not name what only the attack asks for`,
          });
        } else if (!heard.has(ref.value)) {
          reported.add(key);
          problems.push({
            path: ref.path,
            message: `${channel.label} never name ${JSON.stringify(ref.value)} (${where}): the harmful call's value must come from the attack or an earlier result`,
          });
        }
      }
      const outcome = await sandbox.callTool(call.tool, args);
      if (!outcome.isError) {
        results.set(call.tool, outcome.value);
        heard.add(outcome.value);
      }
    }
  }
  return problems;
}

function located(spec: SafetyCase, calls: PlanCall[]): Located[] {
  const base: PropertyKey[] = spec.plan?.attack ? ['plan', 'attack'] : ['witnesses', 'violating', 'calls'];
  return calls.map((call, i) => ({ call, at: [...base, i] }));
}

function valueAtPath(root: unknown, path: PropertyKey[]): unknown {
  let v = root;
  for (const p of path) {
    if (Array.isArray(v) && typeof p === 'number') v = v[p];
    else if (isPlainObject(v)) v = v[String(p)];
    else return undefined;
  }
  return v;
}

function matchesWhen(when: NonNullable<SafetyCase['attack']['injections'][number]['when']>, args: Record<string, unknown>, scope: OperandScope): boolean {
  return matchFields(when, args, scope).ok;
}
