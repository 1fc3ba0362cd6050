import type { RunPlan } from '../engine/scripted-plan.js';

/**
 * The one process-wide registry of the model layer: scripted model servers (vera-safety/testing)
 * started in this process register here by origin, so a run that talks to
 * one delivers its plan without being told — by a call, not an HTTP round trip (servers in other
 * processes, the plugin's embedded one, are passed to the run explicitly and told over HTTP).
 */
export interface InProcessPlanSink {
  set(token: string, plan: RunPlan): void;
  drop(token: string): void;
}

// On globalThis under a registered symbol: the package's built copy and its sources, loaded side by
// side (a test of the plugin), must find the same servers.
const SINKS = Symbol.for('vera.scripted-model-plan-sinks');

export function planSinksInProcess(): Map<string, InProcessPlanSink> {
  const holder = globalThis as { [SINKS]?: Map<string, InProcessPlanSink> };
  return (holder[SINKS] ??= new Map());
}
