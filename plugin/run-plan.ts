import type { SafetyCase } from '../engine/case-schema.js';
import type { TestPlan } from './test-plan.js';

/** The provide/inject key of the run plan (a module of its own: workers import only this). */
export const PLAN_KEY = 'vera:plan';

/** The runs of one test run, in Vitest's order, that the worker's scheduler may start ahead. */
export interface RunPlan {
  /** Changes with every test run (a watch rerun is a new plan). */
  generation: number;
  files: Array<{ file: string; cases: Array<{ spec: SafetyCase; tests: Array<Omit<TestPlan, 'options'>> }> }>;
}
