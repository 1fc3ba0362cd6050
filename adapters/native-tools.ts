/**
 * Agents' own tools under the trajectory's shared names, so one verifier works across agents: a
 * shell command is `shell` (`args.command`) whether Claude Code ran it with Bash or OpenClaw with
 * exec, terminal or process; a web fetch is `http_request` (`args.method`, `args.url`) like the
 * web environment's; file tools are `read_file` / `write_file` / `edit_file` / `list_files`. The
 * agent's own name is kept in `agentTool`; a tool without a shared name keeps its own.
 */

export interface NativeCall {
  tool: string;
  args: Record<string, unknown>;
  /** The agent's name for the tool, when it differs from `tool`. */
  agentTool?: string;
}

function named(agentTool: string, tool: string, args: Record<string, unknown>): NativeCall {
  return tool === agentTool ? { tool, args } : { tool, args, agentTool };
}

/**
 * A command line a client built around the model's command — `/bin/bash -lc '<command>'`, `sh -c
 * "<command>"` — split into the model's command and the whole invocation. Anything else (another
 * program, options after the script, a script that is not one quoted word) stays as it is.
 */
export function splitShellInvocation(commandLine: string): { command: string; invocation?: string } {
  const match = /^(?:\/usr)?(?:\/bin\/)?(?:ba|z|da)?sh\s+-l?c\s+(.+)$/s.exec(commandLine.trim());
  const script = match ? oneShellWord(match[1]!) : undefined;
  return script === undefined ? { command: commandLine } : { command: script, invocation: commandLine };
}

/** The text of `quoted` when it is exactly one shell word of quoted parts ('…', "…", '\''), else undefined. */
function oneShellWord(quoted: string): string | undefined {
  let out = '';
  let i = 0;
  while (i < quoted.length) {
    const c = quoted[i]!;
    if (c === "'") {
      const end = quoted.indexOf("'", i + 1);
      if (end < 0) return undefined;
      out += quoted.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < quoted.length && quoted[j] !== '"'; j++) {
        // Inside double quotes a backslash escapes only these; `$` and backticks would expand, so such a word is left whole.
        if (quoted[j] === '\\' && '"\\$`'.includes(quoted[j + 1] ?? '')) out += quoted[++j];
        else if (quoted[j] === '$' || quoted[j] === '`') return undefined;
        else out += quoted[j];
      }
      if (j >= quoted.length) return undefined;
      i = j + 1;
    } else if (c === '\\' && i + 1 < quoted.length) {
      out += quoted[i + 1];
      i += 2;
    } else return undefined; // an unquoted character: not the one-word shape a client writes
  }
  return out;
}

/** A GET of `url` (what every agent's web-fetch tool does), with the tool's other inputs beside it. */
function fetchOf(agentTool: string, input: Record<string, unknown>): NativeCall {
  return named(agentTool, 'http_request', { method: 'GET', ...input, url: input.url ?? '' });
}

/** Claude Code's tool names → the trajectory's. */
export function claudeCodeNativeCall(name: string, input: Record<string, unknown>): NativeCall {
  const path = input.file_path ?? input.notebook_path ?? input.path;
  switch (name) {
    case 'Bash':
      return named(name, 'shell', { command: input.command ?? '' });
    case 'Write':
      return named(name, 'write_file', { path, content: input.content });
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return named(name, 'edit_file', { path, ...input });
    case 'Read':
      return named(name, 'read_file', { path });
    case 'WebFetch':
      return fetchOf(name, input);
    case 'WebSearch':
      return named(name, 'web_search', { query: input.query ?? '', ...input });
    default:
      return { tool: name, args: input };
  }
}

/** What a terminal or process action types into a shell (`data`, `text`, `literal`); '' for the actions that only look. */
function typed(input: Record<string, unknown>): unknown {
  return input.data ?? input.text ?? input.literal ?? '';
}

/** OpenClaw's tool names → the trajectory's. */
export function openClawNativeCall(name: string, input: Record<string, unknown>): NativeCall {
  switch (name) {
    case 'exec':
      return named(name, 'shell', { command: input.command ?? input.cmd ?? '', ...input });
    // A shared terminal and the sessions exec left running: what is typed into them is a shell command too.
    case 'terminal':
    case 'process':
      return named(name, 'shell', { command: typed(input), ...input });
    case 'write':
    case 'file_write':
      return named(name, 'write_file', { path: input.path ?? input.file_path, content: input.content });
    case 'edit':
    case 'apply_patch':
      return named(name, 'edit_file', input);
    case 'read':
      return named(name, 'read_file', { path: input.path ?? input.file_path });
    case 'ls':
      return named(name, 'list_files', { path: input.path ?? '.', ...input });
    case 'web_fetch':
      return fetchOf(name, input);
    default:
      return { tool: name, args: input };
  }
}
