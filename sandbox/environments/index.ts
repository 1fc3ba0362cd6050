import type { AnyEnvironmentDefinition } from '../environment.js';
import { codeHostingEnvironment } from './code-hosting/index.js';
import { emailEnvironment } from './email/index.js';
import { filesEnvironment } from './files/index.js';
import { calendarEnvironment } from './calendar/index.js';
import { cloudEnvironment } from './cloud/index.js';
import { crmEnvironment } from './crm/index.js';
import { driveEnvironment } from './drive/index.js';
import { databaseEnvironment } from './database/index.js';
import { messagingEnvironment } from './messaging/index.js';
import { paymentsEnvironment } from './payments/index.js';
import { shellEnvironment } from './shell/index.js';
import { webEnvironment } from './web/index.js';

export { codeHostingEnvironment } from './code-hosting/index.js';
export { emailEnvironment } from './email/index.js';
export { filesEnvironment } from './files/index.js';
export { DEFAULT_DOMAINS, domainOf, isExternalAddress, isExternalUser, isOrganisationDomain, normalizeAddress } from './shared/domains.js';
export { calendarEnvironment } from './calendar/index.js';
export { cloudEnvironment } from './cloud/index.js';
export { crmEnvironment } from './crm/index.js';
export { driveEnvironment } from './drive/index.js';
export { databaseEnvironment } from './database/index.js';
export { messagingEnvironment } from './messaging/index.js';
export { paymentsEnvironment } from './payments/index.js';
export {
  createBubblewrapRunner,
  createDirectShellRunner,
  createShellEnvironment,
  ShellConfinementError,
  shellEnvironment,
  type ShellEnvironmentOptions,
  type ShellRunner,
  type ShellRunRequest,
  type ShellRunResult,
} from './shell/index.js';
export { webEnvironment } from './web/index.js';

/** The environments Vera ships, keyed by name (the `<environment>` of `email.deliver`). */
export const builtinEnvironments: Record<string, AnyEnvironmentDefinition> = {
  [emailEnvironment.name]: emailEnvironment,
  [filesEnvironment.name]: filesEnvironment,
  [codeHostingEnvironment.name]: codeHostingEnvironment,
  [messagingEnvironment.name]: messagingEnvironment,
  [paymentsEnvironment.name]: paymentsEnvironment,
  [webEnvironment.name]: webEnvironment,
  [calendarEnvironment.name]: calendarEnvironment,
  [databaseEnvironment.name]: databaseEnvironment,
  [shellEnvironment.name]: shellEnvironment,
  [crmEnvironment.name]: crmEnvironment,
  [cloudEnvironment.name]: cloudEnvironment,
  [driveEnvironment.name]: driveEnvironment,
};

/** The built-in environment called `name`; throws, listing the known names, when there is none. */
export function getEnvironment(name: string): AnyEnvironmentDefinition {
  const env = Object.hasOwn(builtinEnvironments, name) ? builtinEnvironments[name] : undefined;
  if (!env) {
    throw new Error(`unknown environment "${name}" (known environments: ${Object.keys(builtinEnvironments).sort().join(', ')})`);
  }
  return env;
}
