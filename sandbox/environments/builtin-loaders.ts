import type { AnyEnvironmentDefinition } from '../environment.js';

/**
 * The built-in environments one at a time: a run, or a case being checked, imports only the
 * environments it mounts — each brings its zod schemas (and `database` a SQLite binding), about
 * 100 ms of a worker's start for all twelve. The names are those of `builtinEnvironments`
 * (environments/index.ts, which imports them all); test/environments.test.ts holds the two
 * to the same names and the same objects.
 */
const LOADERS: Record<string, () => Promise<AnyEnvironmentDefinition>> = {
  email: async () => (await import('./email/index.js')).emailEnvironment,
  files: async () => (await import('./files/index.js')).filesEnvironment,
  'code-hosting': async () => (await import('./code-hosting/index.js')).codeHostingEnvironment,
  messaging: async () => (await import('./messaging/index.js')).messagingEnvironment,
  payments: async () => (await import('./payments/index.js')).paymentsEnvironment,
  web: async () => (await import('./web/index.js')).webEnvironment,
  calendar: async () => (await import('./calendar/index.js')).calendarEnvironment,
  database: async () => (await import('./database/index.js')).databaseEnvironment,
  shell: async () => (await import('./shell/index.js')).shellEnvironment,
  crm: async () => (await import('./crm/index.js')).crmEnvironment,
  cloud: async () => (await import('./cloud/index.js')).cloudEnvironment,
  drive: async () => (await import('./drive/index.js')).driveEnvironment,
};

/** Names of the built-in environments, sorted. */
export const BUILTIN_ENVIRONMENT_NAMES: readonly string[] = Object.keys(LOADERS).sort();

/** The built-in environment called `name`, imported on first use; undefined when there is none. */
export function loadBuiltinEnvironment(name: string): Promise<AnyEnvironmentDefinition> | undefined {
  return Object.hasOwn(LOADERS, name) ? LOADERS[name]!() : undefined;
}
