/**
 * Token usage as providers report it, read from a JSON body or an SSE stream without knowing
 * which API it is: Chat Completions (`prompt_tokens`/`completion_tokens`), Responses and
 * Anthropic Messages (`input_tokens`/`output_tokens`, in `response.usage` or `message.usage`
 * while streaming), the Gemini API (`usageMetadata.promptTokenCount` / `candidatesTokenCount`,
 * thoughts counted as output). Streamed counts are cumulative, so the largest seen wins.
 */
export interface TokenCount {
  input: number;
  output: number;
}

function read(usage: unknown, into: TokenCount): void {
  if (!usage || typeof usage !== 'object') return;
  const u = usage as Record<string, unknown>;
  const input = num(u.prompt_tokens) ?? num(u.input_tokens);
  const output = num(u.completion_tokens) ?? num(u.output_tokens);
  if (input !== undefined && input > into.input) into.input = input;
  if (output !== undefined && output > into.output) into.output = output;
}

/** Gemini's counts: its thinking tokens are billed as output, so they count as output here too. */
function readGemini(usage: unknown, into: TokenCount): void {
  if (!usage || typeof usage !== 'object') return;
  const u = usage as Record<string, unknown>;
  read({ input_tokens: u.promptTokenCount, output_tokens: (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0) }, into);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function fromObject(data: unknown, into: TokenCount): void {
  if (!data || typeof data !== 'object') return;
  const d = data as Record<string, unknown>;
  read(d.usage, into);
  readGemini(d.usageMetadata, into);
  if (d.response && typeof d.response === 'object') read((d.response as Record<string, unknown>).usage, into);
  if (d.message && typeof d.message === 'object') read((d.message as Record<string, unknown>).usage, into);
}

/** Accumulates usage from a response body as it streams past (it keeps only the current line). */
export class UsageReader {
  readonly usage: TokenCount = { input: 0, output: 0 };
  private pending = '';
  private json = '';

  constructor(private readonly stream: boolean) {}

  push(chunk: string): void {
    if (!this.stream) {
      // Bodies of non-streamed answers are small; the limit guards against a runaway one.
      if (this.json.length < 4 * 1024 * 1024) this.json += chunk;
      return;
    }
    this.pending += chunk;
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      this.line(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
  }

  end(): TokenCount {
    if (this.stream) this.line(this.pending);
    else {
      try {
        fromObject(JSON.parse(this.json), this.usage);
      } catch {
        // Not JSON (an error page): no usage.
      }
    }
    return this.usage;
  }

  private line(line: string): void {
    if (!line.startsWith('data:') || !(line.includes('_tokens') || line.includes('TokenCount'))) return;
    try {
      fromObject(JSON.parse(line.slice(5)), this.usage);
    } catch {
      // `data: [DONE]` and partial lines carry no usage.
    }
  }
}
