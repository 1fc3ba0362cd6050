import type { AnyEnvironmentDefinition } from '../environment.js';
import { createDirectShellRunner, createShellEnvironment } from '../environments/shell/index.js';

/**
 * Environments that behave differently inside the sandbox container. The container itself is
 * the confinement there, so the shell environment runs its commands directly in the container
 * (no bubblewrap, which would need namespaces the container does not grant); everything else
 * uses the built-in definitions unchanged.
 */
export function containerEnvironments(): Record<string, AnyEnvironmentDefinition> {
  const shell = createShellEnvironment({ runner: createDirectShellRunner() });
  return { [shell.name]: shell };
}
