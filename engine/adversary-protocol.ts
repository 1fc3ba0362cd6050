/**
 * The lines by which Vera's LLM adversary hands its model the case and each observation, as JSON
 * after a fixed marker. The adversary (control/llm-adversary.ts) writes them; the scripted
 * adversary policy (testing/policies/adversary.ts), which plays that model deterministically,
 * reads them — one definition, so the two cannot drift apart.
 */
export const ATTACK_SURFACE_MARKER = 'Attack surface (JSON):';
export const OBSERVATION_MARKER = 'Observation (JSON):';
