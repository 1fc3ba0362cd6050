import { defineConfig } from 'vitest/config';
import { vera } from './plugin/index.js';

/**
 * Three projects: `unit` is the project's own test suite (`npm test`); `reliability` runs the
 * attacks and faults of docs/security.md for real and prints their figures (`npm run
 * test:reliability`; CI runs both); `cases` is the bundled case library run through the Vera
 * plugin, exactly as a user's repo would (`npm run demo` runs it against the embedded scripted
 * model, naive then guarded).
 *
 * Without OPENAI_API_KEY / OPENAI_BASE_URL the agent talks to the embedded scripted model
 * (`scripted:<policy>`, VERA_SCRIPTED_POLICY, default guarded); with them, to that endpoint.
 */
const realEndpoint = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/reliability/**'],
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
        plugins: [
          vera({
            include: ['cases/**/*.case.yaml'],
            agent: {
              type: 'reference',
              model: process.env.VERA_MODEL ?? (realEndpoint ? 'gpt-4o-mini' : `scripted-${process.env.VERA_SCRIPTED_POLICY ?? 'guarded'}`),
              ...(realEndpoint
                ? process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}
                : { baseURL: `scripted:${process.env.VERA_SCRIPTED_POLICY ?? 'guarded'}` }),
            },
            concurrency: 16,
          }),
        ],
        test: { name: 'cases', include: [] },
      },
    ],
  },
});
