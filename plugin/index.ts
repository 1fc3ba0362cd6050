export { vera } from './vera-plugin.js';
export type { VeraOptions, AgentSpec, AdversarySpec } from './options.js';
export type { VeraTestMeta } from './meta-from-record.js';
