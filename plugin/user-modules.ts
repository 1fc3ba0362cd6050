/**
 * The user's own modules (a `module` agent, `environments`), as the generated case modules import
 * them. They come through Vite's pipeline — so a `.ts` or `.mts` agent loads on Node 20 exactly as
 * written, and watch mode reruns the cases when the agent (or anything it imports) changes — and
 * the generated module hands them over here before defining its tests. Code outside Vitest (the
 * CLI, `runCase`) falls back to importing the file itself.
 */

export type ModuleNamespace = Record<string, unknown>;

const provided = new Map<string, ModuleNamespace>();

/** Called by each generated case module with the namespaces it imported, keyed by absolute path. */
export function provideUserModules(modules: Record<string, ModuleNamespace>): void {
  for (const [path, namespace] of Object.entries(modules)) provided.set(path, namespace);
}

/** The namespace a case module provided for `path` (the latest: watch mode re-imports changed ones). */
export function providedModule(path: string): ModuleNamespace | undefined {
  return provided.get(path);
}

/** The absolute paths of the user modules the options name, as the plugin resolves them. */
export function userModulePaths(
  options: { agent: { type: string; path?: string }; environments: readonly string[] },
  root: string,
  resolvePath: (root: string, path: string) => string,
): string[] {
  const paths = options.agent.type === 'module' && options.agent.path ? [resolvePath(root, options.agent.path)] : [];
  for (const env of options.environments) paths.push(resolvePath(root, env));
  return [...new Set(paths)];
}
