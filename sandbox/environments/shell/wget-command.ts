import type { Command, ExecResult } from 'just-bash';

/**
 * `wget` for the simulated shell (just-bash ships curl only): the options an agent actually uses
 * — `-q`, `-O <file>` / `-O -` (also `-qO-`), `--output-document`, `--post-data`, `--post-file`,
 * `--body-data`, `--method`, `--header` — over the same simulated network as curl.
 */

type SimulatedFetch = (
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<{ status: number; body: Uint8Array }>;

const decoder = new TextDecoder();

function result(stdout: string, stderr: string, exitCode: number): ExecResult {
  return { stdout, stderr, exitCode };
}

interface WgetRequest {
  url?: string;
  quiet: boolean;
  output?: string;
  method?: string;
  body?: string;
  bodyFile?: string;
  headers: Record<string, string>;
}

/** Parses wget's arguments; returns a usage error text when they do not make a request. */
function parseWget(args: string[]): WgetRequest | string {
  const req: WgetRequest = { quiet: false, headers: {} };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const long = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (long) {
      const [, name, inline] = long;
      const value = () => inline ?? args[++i];
      switch (name) {
        case 'quiet':
          req.quiet = true;
          break;
        case 'output-document':
          req.output = value();
          break;
        case 'post-data':
          req.method ??= 'POST';
          req.body = value() ?? '';
          break;
        case 'post-file':
          req.method ??= 'POST';
          req.bodyFile = value();
          break;
        case 'body-data':
          req.body = value() ?? '';
          break;
        case 'body-file':
          req.bodyFile = value();
          break;
        case 'method':
          req.method = value()?.toUpperCase();
          break;
        case 'header': {
          const header = value() ?? '';
          const colon = header.indexOf(':');
          if (colon > 0) req.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
          break;
        }
        default:
          // --no-check-certificate, --tries=3, … change nothing in a simulation.
          break;
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // Clustered short flags: -q, -O <file>, -qO-, -O-.
      for (let j = 1; j < arg.length; j++) {
        const flag = arg[j];
        if (flag === 'q') req.quiet = true;
        else if (flag === 'O') {
          const rest = arg.slice(j + 1);
          req.output = rest !== '' ? rest : args[++i];
          break;
        } else if (flag === 'U' || flag === 'T' || flag === 't') {
          if (j === arg.length - 1) i++;
          break;
        }
      }
      continue;
    }
    req.url ??= arg;
  }
  if (!req.url) return 'wget: missing URL\nUsage: wget [OPTION]... [URL]...\n';
  return req;
}

function defaultFileName(url: string): string {
  try {
    const name = new URL(url).pathname.split('/').pop();
    return name ? decodeURIComponent(name) : 'index.html';
  } catch {
    return 'index.html';
  }
}

export function wgetCommand(fetch: SimulatedFetch): Command {
  return {
    name: 'wget',
    async execute(args, ctx) {
      const parsed = parseWget(args);
      if (typeof parsed === 'string') return result('', parsed, 1);
      let body = parsed.body;
      if (parsed.bodyFile !== undefined) {
        try {
          body = await ctx.fs.readFile(ctx.fs.resolvePath(ctx.cwd, parsed.bodyFile));
        } catch {
          return result('', `wget: ${parsed.bodyFile}: No such file or directory\n`, 1);
        }
      }
      const url = /^[a-z]+:\/\//i.test(parsed.url!) ? parsed.url! : `http://${parsed.url}`;
      const progress = parsed.quiet ? '' : `--  ${url}\n`;
      let response: { status: number; body: Uint8Array };
      try {
        response = await fetch(url, { method: parsed.method ?? 'GET', headers: parsed.headers, ...(body !== undefined ? { body } : {}) });
      } catch (error) {
        return result('', `${progress}wget: unable to resolve host address: ${(error as Error).message}\n`, 4);
      }
      if (response.status >= 400) return result('', `${progress}ERROR ${response.status}.\n`, 8);
      const text = decoder.decode(response.body);
      if (parsed.output === '-') return result(text, progress, 0);
      const file = parsed.output ?? defaultFileName(url);
      await ctx.fs.writeFile(ctx.fs.resolvePath(ctx.cwd, file), text);
      return result('', parsed.quiet ? '' : `${progress}Saving to: '${file}'\n\n'${file}' saved [${response.body.length}]\n`, 0);
    },
  };
}
