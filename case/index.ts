/**
 * `vera-safety/case`: cases written in TypeScript. A `*.case.ts` file's default export is a case
 * (or an array of them) built with `defineCase`; nothing here runs anything, so a case module
 * imports no more than its own helpers.
 */
export { defineCase } from '../engine/define-case.js';
export type { SafetyCaseInput as CaseDefinition, ThreatModel } from '../engine/case-schema.js';
