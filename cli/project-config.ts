import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { ResolvedVeraOptions } from '../plugin/options.js';

/**
 * What the project's Vera plugin is set up to run, read from its Vitest config — so `vera check`,
 * `vera report` and `vera replay` default to the project's own case files and records instead of
 * a hard-coded folder. The config is loaded through Vite (TypeScript configs work on Node 20);
 * every `vera()` in it (top level or in an inline `test.projects` entry) is one project.
 */

export interface VeraProject {
  /** The Vitest project's root: include globs and paths are relative to it. */
  root: string;
  name?: string;
  include: string[];
  recordDir: string | false;
  environments: string[];
  configFile: string;
}

const CONFIG_NAMES = ['vitest.config', 'vite.config'].flatMap((base) => ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].map((ext) => `${base}.${ext}`));

/** The Vitest config file in `cwd` (the names Vitest itself looks for, in its order), if any. */
export function findConfigFile(cwd: string): string | undefined {
  for (const name of CONFIG_NAMES) {
    const file = join(cwd, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

type AnyPlugin = { name?: string; api?: { veraOptions?: ResolvedVeraOptions } } | AnyPlugin[] | false | null | undefined;

function veraOptionsOf(plugins: unknown): ResolvedVeraOptions[] {
  const out: ResolvedVeraOptions[] = [];
  const walk = (p: AnyPlugin) => {
    if (Array.isArray(p)) p.forEach(walk);
    else if (p && typeof p === 'object' && p.name === 'vera' && p.api?.veraOptions) out.push(p.api.veraOptions);
  };
  walk(plugins as AnyPlugin);
  return out;
}

interface LooseConfig {
  root?: string;
  plugins?: unknown;
  test?: { root?: string; name?: string | { label?: string }; projects?: unknown[] };
}

function projectName(config: LooseConfig): string | undefined {
  const name = config.test?.name;
  return typeof name === 'string' ? name : name?.label;
}

/** Every Vera project of the Vitest config in `cwd`; `[]` when there is no config or no `vera()` in it. */
export async function veraProjects(cwd: string): Promise<VeraProject[]> {
  const configFile = findConfigFile(cwd);
  if (!configFile) return [];
  const { loadConfigFromFile } = await import('vite');
  const loaded = await loadConfigFromFile({ command: 'serve', mode: 'test' }, configFile, cwd, 'silent', undefined, 'runner');
  if (!loaded) return [];
  const config = loaded.config as LooseConfig;
  const baseRoot = resolve(dirname(configFile), config.test?.root ?? config.root ?? '.');
  const projects: VeraProject[] = [];
  const add = (part: LooseConfig, root: string) => {
    for (const options of veraOptionsOf(part.plugins)) {
      const name = projectName(part);
      projects.push({
        root,
        include: options.include,
        recordDir: options.recordDir,
        environments: options.environments,
        configFile,
        ...(name ? { name } : {}),
      });
    }
  };
  add(config, baseRoot);
  for (const entry of config.test?.projects ?? []) {
    if (entry && typeof entry === 'object') {
      const part = entry as LooseConfig;
      add(part, resolve(baseRoot, part.test?.root ?? part.root ?? '.'));
    }
  }
  return projects;
}

/** `**`, `*`, `?` and `{a,b}` globs as a regular expression over `/`-separated relative paths. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches any number of directories (also none); a trailing `**` anything.
      if (glob[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) out += '\\{';
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map((alt) => alt.replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
          .join('|')})`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out.replace(/^\.\//, '')}$`);
}

/** The files under `root` (not in node_modules or dot-directories) that one of `globs` matches. */
export async function globFiles(root: string, globs: readonly string[]): Promise<string[]> {
  const patterns = globs.map((g) => globToRegExp(g.replace(/^\.\//, '')));
  const out: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const rel = relative(root, file).split(sep).join('/');
    if (rel.split('/').some((part) => part === 'node_modules' || (part.startsWith('.') && part !== '.'))) continue;
    if (patterns.some((p) => p.test(rel))) out.push(file);
  }
  return out.sort();
}
