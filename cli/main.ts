import { checkCommand } from './commands/check.js';
import { compileCommand } from './commands/compile.js';
import { composeCommand } from './commands/compose.js';
import { diffCommand } from './commands/diff.js';
import { exploreCommand } from './commands/explore.js';
import { libraryCommand } from './commands/library.js';
import { installModelCommand } from './commands/install-model.js';
import { installAgentsCommand, sandboxImageCommand } from './commands/package-script.js';
import { replayCommand } from './commands/replay.js';
import { reportCommand } from './commands/report.js';

/** One `vera` subcommand: its usage line and its runner (returns the exit code). */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  run(args: string[], io: CliIO): Promise<number>;
}

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  cwd: string;
}

/** Subcommands by name; each lives in its own file under cli/commands/. */
export const commands: Record<string, CliCommand> = {
  [checkCommand.name]: checkCommand,
  [reportCommand.name]: reportCommand,
  [replayCommand.name]: replayCommand,
  [diffCommand.name]: diffCommand,
  [exploreCommand.name]: exploreCommand,
  [composeCommand.name]: composeCommand,
  [compileCommand.name]: compileCommand,
  [libraryCommand.name]: libraryCommand,
  [sandboxImageCommand.name]: sandboxImageCommand,
  [installAgentsCommand.name]: installAgentsCommand,
  [installModelCommand.name]: installModelCommand,
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  return [
    'vera — safety tests for tool-using LLM agents (run the cases with `npx vitest`)',
    '',
    'Commands:',
    ...Object.values(commands).map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `vera <command> --help` for a command's options.",
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = defaultIO()): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    io.err(`vera: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(`usage: ${command.usage}`);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    io.err(`vera ${name}: ${(error as Error).message}`);
    return 1;
  }
}

export function defaultIO(): CliIO {
  return { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), cwd: process.cwd() };
}
