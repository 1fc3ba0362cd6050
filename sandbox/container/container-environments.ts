import type { EnvironmentDefinition } from '../environment.js';

/**
 * Environments that behave differently inside the sandbox container. The container itself is
 * the confinement there, so an environment that needs confinement on the host (the shell
 * environment's commands) runs directly inside it. Empty until such an environment exists; the
 * built-in definitions are used for everything else.
 */
export function containerEnvironments(): Record<string, EnvironmentDefinition<any>> {
  return {};
}
