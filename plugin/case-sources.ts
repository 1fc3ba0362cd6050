import { readFile } from 'node:fs/promises';
import { createServerModuleRunner, type ViteDevServer } from 'vite';
import type { ModuleRunner } from 'vite/module-runner';
import type { CaseSuiteLoadResult } from '../engine/case-loader.js';
import { CASE_MODULE_FILE, loadCaseModule } from './case-module.js';
import { parseCaseFileCached } from './parse-cache.js';

/** A case file: YAML documents (`*.case.yaml`) or a module that exports cases (`*.case.ts`). */
export const CASE_FILE = /\.case\.(?:ya?ml|[cm]?[jt]s)$/;

/**
 * Where a plugin's cases come from, in the main process: a YAML file is parsed (once per content),
 * a case module is evaluated by a module runner of the project's Vite server (once, until it or a
 * module it imports changes: then its generated test module is invalidated too, so a watch-mode
 * rerun sees the new cases). The transform, the risk tags and the run planner read the same loads.
 */
export class CaseSources {
  private server: ViteDevServer | undefined;
  private runner: ModuleRunner | undefined;
  private readonly modules = new Map<string, Promise<CaseSuiteLoadResult>>();

  /** The project's server, once Vitest has one (`configureVitest`). */
  attach(server: ViteDevServer): void {
    if (this.server === server) return;
    this.server = server;
    for (const event of ['change', 'add', 'unlink'] as const) server.watcher.on(event, (file: string) => this.changed(file));
  }

  async load(file: string, source?: string): Promise<CaseSuiteLoadResult> {
    if (!CASE_MODULE_FILE.test(file)) return parseCaseFileCached(file, source ?? (await readFile(file, 'utf8')));
    let loading = this.modules.get(file);
    if (!loading) {
      loading = loadCaseModule(file, (id) => this.moduleRunner().import(id));
      this.modules.set(file, loading);
    }
    return loading;
  }

  async close(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    this.modules.clear();
    await runner?.close();
  }

  private moduleRunner(): ModuleRunner {
    if (this.runner) return this.runner;
    const server = this.server;
    if (!server) throw new Error('vera: a case module was loaded before the project had a Vite server');
    // Its own runner, not Vitest's: its cache is cleared whenever a module a case module evaluated
    // changes. Stack traces point at the module's TypeScript lines.
    this.runner = createServerModuleRunner(server.environments.ssr, { hmr: false, sourcemapInterceptor: 'prepareStackTrace' });
    return this.runner;
  }

  private changed(file: string): void {
    const runner = this.runner;
    const caseFiles = [...this.modules.keys()];
    if (!runner || (!caseFiles.includes(file) && !runner.evaluatedModules.getModulesByFile(file)?.size)) return;
    // A case module, or something one imports: every case module is evaluated anew (the runner
    // holds nothing else), and their generated test modules are transformed anew.
    runner.clearCache();
    this.modules.clear();
    for (const environment of Object.values(this.server?.environments ?? {})) {
      for (const caseFile of caseFiles) {
        for (const node of environment.moduleGraph.getModulesByFile(caseFile) ?? []) environment.moduleGraph.invalidateModule(node);
      }
    }
  }
}
