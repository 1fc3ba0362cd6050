import type { EnvironmentDefinition } from '../environment.js';
import { codeHostingEnvironment } from './code-hosting.js';
import { emailEnvironment } from './email.js';
import { filesEnvironment } from './files.js';

export { codeHostingEnvironment } from './code-hosting.js';
export { emailEnvironment } from './email.js';
export { filesEnvironment } from './files.js';
export * from './domains.js';

/** The environments Vera ships, keyed by name (the `<environment>` of `email.deliver`). */
export const builtinEnvironments: Record<string, EnvironmentDefinition<any>> = {
  [emailEnvironment.name]: emailEnvironment,
  [filesEnvironment.name]: filesEnvironment,
  [codeHostingEnvironment.name]: codeHostingEnvironment,
};

/** The built-in environment called `name`; throws, listing the known names, when there is none. */
export function getEnvironment(name: string): EnvironmentDefinition<any> {
  const env = Object.hasOwn(builtinEnvironments, name) ? builtinEnvironments[name] : undefined;
  if (!env) {
    throw new Error(`unknown environment "${name}" (known environments: ${Object.keys(builtinEnvironments).sort().join(', ')})`);
  }
  return env;
}
