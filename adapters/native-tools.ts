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
