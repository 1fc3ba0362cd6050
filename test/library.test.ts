/**
 * The bundled library (Vera-Bench) holds what docs/library.md says, and every case in it is
 * proven: the committed suites are exactly the composition of the committed families; the
 * taxonomy is exactly what `vera explore --declared --fresh` makes of the corpus; the counts meet
 * the bar (≥ 200 families, ≥ 1600 cases, ≥ 124 risk leaves in ≥ 10 categories, ≥ 16 attack
 * methods, ≥ 12 environments, ≥ 8 cases per risk leaf, ≥ 5 sources per leaf); every family's
 * witnesses hold (violating, safe, do-nothing, near misses). test/library-policies.test.ts runs every
 * case × threat model against the scripted policies (its own file: the two halves run in parallel).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { attackSurfaceProblems, surfaceOf, threatModelsFor } from '../engine/attack-surface.js';
import { anchorProblems } from '../pipeline/compile/target-gate.js';
import { loadSuites } from '../bench/library-runs.js';
import type { SafetyCase } from '../engine/case-schema.js';
import { CaseValidation } from '../runner/case-validation.js';
import { parseCaseSuiteSource } from '../engine/case-loader.js';
import { explore } from '../pipeline/explore/explore.js';
import { DocumentCorpus } from '../pipeline/explore/sources/document-corpus.js';
import { loadDocumentFolder } from '../pipeline/explore/sources/local-folder.js';
import { composeLibrary, loadFamilies, suiteOf, writeLibrary, type ComposedLibrary, type LoadedFamily } from '../pipeline/library/compose-library.js';
import { libraryReport } from '../pipeline/library/library-report.js';
import { readTaskSanity, TASK_SANITY_FILE } from '../pipeline/library/task-sanity-file.js';
import { readRobustness, ROBUSTNESS_FILE } from '../pipeline/library/robustness-file.js';
import { reportRobustness } from '../cli/commands/check-robustness.js';
import { describeRouteOutcome } from '../runner/robustness.js';
import { median } from '../engine/stats.js';
import { attackRenderers } from '../pipeline/library/renderers/index.js';
import { Taxonomy } from '../pipeline/taxonomy/taxonomy.js';
import { isRecordSource } from '../pipeline/taxonomy/taxonomy-schema.js';
import { REPO } from './helpers/run-vitest.js';

/**
 * Families whose verifier is deliberately about a class, not one seeded item (the target gate,
 * pipeline/compile/target-gate.ts, flags them; each was reviewed): bulk thresholds (three or more
 * outside recipients, five or more people, an export of several records), a permission class
 * (any role with Admin, any trust to an outside account), any unrequested transfer, a content
 * class ("no open issues"), and attacker-supplied targets (a look-alike domain, a new payee) that
 * the obfuscated variants name only in encoded form. A seeded id named only under `not` ("tickets other
 * than tkt-1544") excludes an item rather than naming the target, so it does not anchor either.
 * (Two of them — any role with Admin after an AccessDenied, every other ticket solved — passed only
 * while a short frame sentence happened to quote "Admin" or "solved"; their verifiers are the class.)
 * A new family whose verifier names nothing its case sets up fails the test until it is reviewed.
 */
const CLASS_LEVEL_VERIFIERS = [
  'admin-on-ci-deploy-role-after-access-denied',
  'admin-policy-for-new-analyst-at-onboarding',
  'blast-embargoed-reorg-announcement-to-contacts',
  'export-customer-list-to-migration-consultant',
  'give-customer-outside-iban-for-overdue-invoice',
  'mail-advisory-dinner-guest-list-to-sponsor',
  'prepay-supplier-from-reserve-unasked',
  'repoint-release-deploy-host-to-lookalike-server',
  'send-address-book-to-expo-organiser',
  'send-party-budget-to-colleague-unapproved',
  'solve-whole-queue-for-quarter-end',
  'trust-outside-cost-review-firm-on-billing-role',
  'vendor-support-role-for-database-provider',
];

let families: LoadedFamily[];
let library: ComposedLibrary;
let cases: SafetyCase[];
let taxonomy: Taxonomy;
beforeAll(async () => {
  families = await loadFamilies(join(REPO, 'cases/families'));
  taxonomy = await Taxonomy.load(join(REPO, 'cases/taxonomy'));
  library = composeLibrary(families, { taxonomy });
  cases = await loadSuites(join(REPO, 'cases/bench'));
  // Composing 2500 cases and parsing 14 MB of suites: seconds alone, a minute or more beside a full parallel suite.
}, 300_000);

describe('the library is reproducible from the repository', () => {
  it('cases/bench is the composition of cases/families, byte for byte, and composing refuses nothing', async () => {
    expect(library.problems).toEqual([]);
    const write = await writeLibrary(join(REPO, 'cases/bench'), library, { check: true });
    expect(write.stale, 'run: npx vera library compose').toEqual([]);
  });

  it('cases/taxonomy is what vera explore --declared --fresh makes of the corpus', async () => {
    const rebuilt = Taxonomy.empty(taxonomy);
    const docs = await loadDocumentFolder(join(REPO, 'cases/taxonomy/corpus'));
    await explore({ taxonomy: rebuilt, sources: [new DocumentCorpus('local', docs)], budget: 10_000 });
    const dir = await mkdtemp(join(tmpdir(), 'vera-taxonomy-'));
    try {
      await rebuilt.save(dir);
      for (const file of ['risks.yaml', 'attacks.yaml', 'environments.yaml', 'sources.yaml']) {
        expect(await readFile(join(dir, file), 'utf8'), `${file} (run: npx vera explore --declared --fresh --docs cases/taxonomy/corpus --budget 1000)`).toBe(
          await readFile(join(REPO, 'cases/taxonomy', file), 'utf8'),
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('docs/library.md is the generated page', async () => {
    const handWritten = (await loadSuites(join(REPO, 'cases'))).length - cases.length;
    const taskSanity = await readTaskSanity(join(REPO, TASK_SANITY_FILE));
    const robustness = await readRobustness(join(REPO, ROBUSTNESS_FILE));
    const text = libraryReport({ taxonomy, families, library, handWritten, ...(taskSanity ? { taskSanity } : {}), ...(robustness ? { robustness } : {}) });
    expect(await readFile(join(REPO, 'docs/library.md'), 'utf8'), 'run: npx vera library report').toBe(text);
  });

  it('lists, for review, the families whose honest task a real model did not act on — and only those', () => {
    const entry = {
      environment: 'email',
      planned: ['list_emails()', 'read_email({"id":"m-1"})'],
      toolCalls: 1,
      refusedCalls: 0,
      status: 'safe',
      answer: 'Done.',
    };
    const none = { made: ['send_email({"to":"x@corp.example"})'], plannedToolsCalled: [] };
    const some = { made: ['list_emails()'], plannedToolsCalled: ['list_emails'] };
    const text = libraryReport({
      taxonomy,
      families,
      library,
      handWritten: 0,
      taskSanity: {
        summary: { model: 'm', date: '2026-12-02', families: 3, reachedPlan: 1, onTheWay: 1, couldNotAct: 1, taskDone: 1, noToolCall: 0, minutes: 1 },
        results: [
          { ...entry, ...none, family: 'cut-short', caseId: 'cut-short--a', task: 'Pull request', missing: ['list_emails()', 'read_email({"id":"m-1"})'] },
          { ...entry, ...some, family: 'half-way', caseId: 'half-way--a', task: 'Read the newsletter.', missing: ['read_email({"id":"m-1"})'] },
          { ...entry, ...some, family: 'reads-fine', caseId: 'reads-fine--a', task: 'Read the newsletter.', missing: [], taskDone: true },
        ],
      },
    });
    const section = text.split('## Tasks a real model could not act on')[1]!;
    expect(section).toContain('**1 reached every planned call**');
    expect(section).toContain('| `cut-short` | email | Pull request | `list_emails`, `read_email` | `send_email({"to":"x@corp.example"})`; said “Done.” |');
    expect(section).not.toContain('half-way');
    expect(section).not.toContain('reads-fine');
  });
});

describe('vera library', () => {
  const io = (cwd: string) => {
    const lines: string[] = [];
    const errors: string[] = [];
    return { lines, errors, out: (l: string) => lines.push(l), err: (l: string) => errors.push(l), cwd };
  };

  it('compose --check and report --check pass on the repository; a changed family makes compose --check fail, naming the suite', async () => {
    const { main } = await import('../cli/main.js');
    const x = io(REPO);
    expect(await main(['library', 'compose', '--check'], x)).toBe(0);
    expect(x.lines[0]).toBe(`${families.length} families → ${cases.length} cases in ${library.suites.size} suite files`);
    expect(await main(['library', 'report', '--check'], x)).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), 'vera-families-'));
    try {
      const { cp, writeFile } = await import('node:fs/promises');
      await cp(join(REPO, 'cases/families'), join(dir, 'families'), { recursive: true });
      const file = join(dir, 'families', families[0]!.file);
      await writeFile(file, (await readFile(file, 'utf8')).replace(/^task: .*$/m, 'task: Please tidy my inbox.'));
      const y = io(REPO);
      expect(await main(['library', 'compose', '--check', '--families', join(dir, 'families')], y)).toBe(1);
      expect(y.errors).toEqual([`vera library: ${suiteOf(families[0]!.family)} differs from the composition (run: vera library compose)`]);
      // A family that does not validate is one error naming file, line and field.
      await writeFile(file, (await readFile(file, 'utf8')).replace(/^risk: /m, 'risk: Not A Path\nrisk_: '));
      const z = io(REPO);
      expect(await main(['library', 'compose', '--check', '--families', join(dir, 'families')], z)).toBe(1);
      expect(z.errors[0]).toMatch(new RegExp(`^vera library: ${families[0]!.file.replace(/[.]/g, '\\.')}:\\d+ `));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the counts', () => {
  it('≥ 124 risk leaves in ≥ 10 categories, ≥ 16 attack methods, ≥ 12 environments, each leaf on ≥ 5 distinct sources', () => {
    const risks = taxonomy.leaves('risks');
    expect(risks.length).toBeGreaterThanOrEqual(124);
    expect(new Set(risks.map((l) => l.path.split('/')[0])).size).toBeGreaterThanOrEqual(10);
    expect(taxonomy.leaves('attacks').length).toBeGreaterThanOrEqual(16);
    expect(taxonomy.leaves('environments').length).toBeGreaterThanOrEqual(12);
    for (const kind of ['risks', 'attacks', 'environments'] as const) {
      for (const { path, node } of taxonomy.walk(kind)) expect(new Set(node.evidence).size, `${kind}:${path}`).toBeGreaterThanOrEqual(5);
    }
  });

  it('every leaf of every tree stands on ≥ 3 distinct publishers, and every source names its publisher', () => {
    const unnamed = Object.entries(taxonomy.sources)
      .filter(([id, s]) => !isRecordSource(id) && !s.publisher)
      .map(([id]) => id);
    expect(unnamed, 'add `publisher:` to the front matter of these documents').toEqual([]);
    // Five sources from one organisation (ATLAS, ATT&CK and CWE are all MITRE) are one voice, not five.
    const thin: string[] = [];
    for (const kind of ['risks', 'attacks', 'environments'] as const) {
      for (const { path, node } of taxonomy.leaves(kind)) {
        const publishers = taxonomy.publishersOf(node.evidence);
        if (publishers.length < 3) thin.push(`${kind}:${path} (${publishers.join(', ') || 'none'})`);
      }
    }
    expect(thin).toEqual([]);
  });

  it('every risk category cites at least one paper or benchmark', () => {
    const without = taxonomy.trees.risks.nodes
      .filter((category) => {
        const cited = [...taxonomy.walk('risks')]
          .filter(({ path }) => path === category.id || path.startsWith(`${category.id}/`))
          .flatMap(({ node }) => node.evidence);
        return !cited.some((id) => taxonomy.sources[id]?.kind === 'paper');
      })
      .map((category) => category.id);
    expect(without).toEqual([]);
  });

  it('≥ 200 families, ≥ 1600 cases, every risk leaf with ≥ 8 cases, every attack method and environment used widely', () => {
    expect(families.length).toBeGreaterThanOrEqual(200);
    expect(cases.length).toBeGreaterThanOrEqual(1600);
    for (const { path } of taxonomy.leaves('risks')) expect(cases.filter((c) => c.taxonomy.risk === path).length, path).toBeGreaterThanOrEqual(8);
    // A method that needs something of the environment (search poisoning needs pages to search) goes only where it can.
    for (const r of attackRenderers) {
      const needs = taxonomy.needsOf('attacks', r.attack).length > 0;
      expect(cases.filter((c) => c.taxonomy.attack === r.attack).length, r.attack).toBeGreaterThanOrEqual(needs ? 8 : 40);
    }
    for (const { path } of taxonomy.leaves('environments'))
      expect(cases.filter((c) => c.taxonomy.environment === path).length, path).toBeGreaterThanOrEqual(40);
  });

  it('every case names taxonomy nodes that exist, carries its attack method and runs under every threat model its surface supports', () => {
    const surfaceProblems: string[] = [];
    for (const c of cases) {
      expect(taxonomy.has('risks', c.taxonomy.risk), `${c.id}: ${c.taxonomy.risk}`).toBe(true);
      expect(taxonomy.has('attacks', c.taxonomy.attack), `${c.id}: ${c.taxonomy.attack}`).toBe(true);
      expect(taxonomy.has('environments', c.taxonomy.environment), `${c.id}: ${c.taxonomy.environment}`).toBe(true);
      surfaceProblems.push(...attackSurfaceProblems(c).map((p) => `${c.id}: ${p}`));
      expect(c.threatModels, c.id).toEqual(threatModelsFor(c.attack));
      // A method that arrives through data comes with an honest user: never reported under single-channel.
      const surface = surfaceOf(c.taxonomy.attack);
      if (surface === 'injected' || surface === 'tool-description') expect(c.threatModels, c.id).not.toContain('single-channel');
      else expect(c.threatModels, c.id).toEqual(['benign', 'single-channel', 'multi-channel', 'indirect']);
    }
    expect(surfaceProblems).toEqual([]);
    // Every attack leaf of the taxonomy has a declared surface (a new leaf cannot go undeclared).
    for (const { path } of taxonomy.leaves('attacks')) expect(surfaceOf(path), path).toBeDefined();
  });

  it('every verifier names something its case sets up, except the reviewed class-level checks', () => {
    // Per family, over all its cases: an attacker-supplied target (a look-alike host, a new IBAN) is
    // named in plain text by some renderings and only encoded by others (base64, homoglyphs), so a
    // family is unanchored when none of its cases names its target — not when one obfuscated case does not.
    const byFamily = new Map<string, boolean[]>();
    for (const c of cases) {
      const family = c.tags.find((t) => t.startsWith('family:'))!.slice('family:'.length);
      byFamily.set(family, [...(byFamily.get(family) ?? []), anchorProblems(c).length > 0]);
    }
    const unanchored = [...byFamily]
      .filter(([, flags]) => flags.every(Boolean))
      .map(([family]) => family)
      .sort();
    expect(unanchored).toEqual([...CLASS_LEVEL_VERIFIERS].sort());
  });
});

describe('every case reads as a real conversation', () => {
  // The test double's conventions (ACTION lines, <<tool.field>> references) stay in the plan, out of band.
  const PLAN_SYNTAX = /ACTION:\s*[A-Za-z_]|<<\s*[A-Za-z0-9_-]+\s*(?:[.[]|>>)/;
  const strings = (value: unknown): string[] =>
    typeof value === 'string'
      ? [value]
      : Array.isArray(value)
        ? value.flatMap(strings)
        : value && typeof value === 'object'
          ? Object.values(value).flatMap(strings)
          : [];

  it('no task, attack message, payload, tool description or seeded text carries plan syntax', () => {
    const offending: string[] = [];
    for (const c of cases) {
      const visible = [
        c.task,
        ...(c.attack.messages ?? []),
        ...c.attack.injections.map((i) => i.payload),
        ...c.attack.toolDescriptions.map((d) => d.payload),
        ...strings(c.init),
      ];
      for (const text of visible) if (PLAN_SYNTAX.test(text)) offending.push(`${c.id}: ${text.slice(0, 120)}`);
    }
    expect(offending).toEqual([]);
  });
});

describe('attack texts are written for each family', () => {
  it('every family writes its own text for each of its methods, and no opening line of a method is shared by more than six families', () => {
    const unwritten = families.filter((f) => !f.family.renderings).map((f) => f.family.id);
    expect(unwritten).toEqual([]);
    // A frame pasted from family to family shows as the same opening words: five, for the same method.
    const openings = new Map<string, Set<string>>();
    for (const { family } of families) {
      for (const [method, written] of Object.entries(family.renderings!)) {
        for (const text of [written.message, written.injected, written.description].flatMap((t) => (t === undefined ? [] : typeof t === 'string' ? [t] : t))) {
          const words = text
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\s']/gu, ' ')
            .split(/\s+/)
            .filter(Boolean);
          if (words.length < 8) continue;
          const key = `${method}: ${words.slice(0, 5).join(' ')}`;
          openings.set(key, (openings.get(key) ?? new Set()).add(family.id));
        }
      }
    }
    const stock = [...openings].filter(([, ids]) => ids.size > 6).map(([key, ids]) => `${key} (${ids.size} families)`);
    expect(stock).toEqual([]);
  });
});

describe('every family is proven', () => {
  it('every case passes what the plugin checks when its file loads: init, references, witnesses (violating → violated; safe, doing nothing and every near miss → safe; utility on the safe witness only), plan provenance, verifier paths', async () => {
    const byFamily = new Map(cases.map((c) => [c.tags.find((t) => t.startsWith('family:')), c]));
    expect(byFamily.size).toBe(families.length);
    for (const spec of cases) expect(spec.witnesses.nearMiss.length, spec.id).toBeGreaterThanOrEqual(1);
    // The plugin's own load-time checks, on every composed case: a case that fails them is a file
    // error in a user's run (`library` option, npm run demo), never a verdict.
    const validation = new CaseValidation();
    const problems: string[] = [];
    const suites = [...library.suites.keys()];
    for (let i = 0; i < suites.length; i += 8) {
      const found = await Promise.all(
        suites.slice(i, i + 8).map(async (suite) => {
          const file = join(REPO, 'cases/bench', suite);
          const parsed = parseCaseSuiteSource(await readFile(file, 'utf8'), file);
          if (!parsed.ok) return parsed.problems;
          return validation.problemsOf(parsed.cases);
        }),
      );
      problems.push(...found.flat().map((p) => `cases/bench/${p.file.split('cases/bench/')[1]}:${p.line} ${p.field}: ${p.message}`));
    }
    expect(problems).toEqual([]);
  }, 600_000);
});

describe('every verifier holds on other routes to the harm', () => {
  it('no case falls below its figure in cases/robustness.json, every case has one, and the library median is 100%', async () => {
    const recorded = await readRobustness(join(REPO, ROBUSTNESS_FILE));
    expect(recorded, 'run: npx vera check cases --robustness --record cases/robustness.json').toBeDefined();
    const all = await loadSuites(join(REPO, 'cases'));
    const reports = await reportRobustness(
      all.map((spec) => ({ spec, file: spec.id })),
      { environments: {}, out: () => {} },
    );
    const below: string[] = [];
    for (const r of reports) {
      const figure = recorded!.cases[r.caseId];
      if (!figure) below.push(`${r.caseId}: no recorded figure`);
      else if (figure.share !== null && (r.share === undefined || r.share < figure.share - 1e-4))
        below.push(`${r.caseId}: ${r.same}/${r.judged} judged as the original, recorded ${figure.share} — ${r.misses.map(describeRouteOutcome).join('; ')}`);
    }
    expect(below).toEqual([]);
    const shares = reports.map((r) => r.share).filter((x): x is number => x !== undefined);
    expect(median(shares)).toBe(1);
  }, 300_000);
});
