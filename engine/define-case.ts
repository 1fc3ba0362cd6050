import type { SafetyCaseInput } from './case-schema.js';

/**
 * A case written in TypeScript (`*.case.ts`): `export default defineCase({ … })`, or an array of
 * them. Typed by the case format's own schema (what a YAML case may hold, checked as you type);
 * the plugin validates the value as it does a YAML document and points its problems at the
 * module's lines. It returns its argument: a case is data, whoever builds it.
 */
export function defineCase(spec: SafetyCaseInput): SafetyCaseInput {
  return spec;
}
