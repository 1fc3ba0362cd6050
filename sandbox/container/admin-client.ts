import type { z } from 'zod';
import { InitScriptError } from '../sandbox.js';
import { errorResponse } from './protocol.js';
import { VeraError } from '../../engine/errors.js';

/** The admin API refused a request (bad body, unknown environment, …): a bug or a broken case, not a dead container. */
export class SandboxServerError extends VeraError {
  constructor(
    message: string,
    readonly kind: string,
    readonly status: number,
  ) {
    super('SANDBOX_REFUSED', message);
    this.name = 'SandboxServerError';
  }
}

export interface AdminClientOptions {
  baseUrl: string;
  token: string;
  /** Per-request limit; a request past it fails (a hung server must not hang the run). */
  timeoutMs: number;
  /**
   * Called when a request could not reach the server at all; returns the error to throw —
   * for a container, one that says whether (and how) it died.
   */
  onUnreachable(route: string, cause: Error): Promise<Error>;
}

/** Calls the sandbox server's admin API (protocol.ts) over loopback HTTP. */
export class SandboxAdminClient {
  constructor(private readonly options: AdminClientOptions) {}

  async request<S extends z.ZodType>(method: 'GET' | 'POST', path: string, body: unknown, schema: S): Promise<z.output<S>> {
    const route = `${method} ${path}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const e = error as Error & { cause?: Error };
      if (e.name === 'TimeoutError') {
        throw new SandboxServerError(`sandbox admin API did not answer ${route} within ${this.options.timeoutMs} ms`, 'Timeout', 0);
      }
      throw await this.options.onUnreachable(route, e.cause instanceof Error ? e.cause : e);
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      throw new SandboxServerError(
        `sandbox admin API answered ${route} with non-JSON (HTTP ${response.status}): ${text.slice(0, 200)}`,
        'Protocol',
        response.status,
      );
    }
    if (!response.ok) {
      const parsed = errorResponse.safeParse(json);
      if (!parsed.success) throw new SandboxServerError(`sandbox admin API: ${route} failed with HTTP ${response.status}`, 'Protocol', response.status);
      const { error } = parsed.data;
      if (error.kind === 'InitScriptError' && error.step !== undefined && error.op !== undefined) {
        throw new InitScriptError(error.step, error.op, error.detail ?? error.message);
      }
      throw new SandboxServerError(error.message, error.kind, response.status);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new SandboxServerError(
        `sandbox admin API: unexpected answer to ${route}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        'Protocol',
        response.status,
      );
    }
    return parsed.data;
  }
}
