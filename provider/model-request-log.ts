import { z } from 'zod';
import { modelPromptSchema, type Offered, type OfferedTool } from '../engine/record-schema.js';
import { offerOf } from './model-offer.js';

/**
 * One run's agent model requests as the model proxy saw them: each distinct prompt (system
 * prompt + tool list) once, and per request when it came and which prompt it carried. The proxy
 * keeps it until the run fetches it (`GET /requests/<token>`); the run then files the requests
 * under its turns (`offeredByTurn`).
 */
export const modelRequestLogSchema = z.object({
  prompts: z.array(modelPromptSchema),
  requests: z.array(z.object({ at: z.number(), prompt: z.number().int(), model: z.string() })),
  /** Requests past the limits, counted only. */
  unlogged: z.number().int(),
});
export type ModelRequestLog = z.infer<typeof modelRequestLogSchema>;

/** A run that loops must not grow the proxy without bound: past these, requests are only counted. */
const MAX_PROMPTS = 16;
const MAX_REQUESTS = 2000;

export class RequestLog {
  private readonly log: ModelRequestLog = { prompts: [], requests: [], unlogged: 0 };
  private readonly keys = new Map<string, number>();

  /** Notes one request (its parsed JSON body); bodies that are no model request are left out. */
  add(body: unknown, model: string, at = Date.now()): void {
    const offer = offerOf(body);
    if (!offer) return;
    let prompt = this.keys.get(offer.key);
    if (prompt === undefined && this.log.prompts.length < MAX_PROMPTS) {
      prompt = this.log.prompts.push(offer.prompt) - 1;
      this.keys.set(offer.key, prompt);
    }
    if (prompt === undefined || this.log.requests.length >= MAX_REQUESTS) this.log.unlogged++;
    else this.log.requests.push({ at, prompt, model });
  }

  toJSON(): ModelRequestLog {
    return this.log;
  }
}

/** Whether an offered tool is one of the gateway's, as agents name them: `mcp__vera__x`, `vera__x`, `vera_x`, `mcp__vera` + `x`. */
/** `listed` is the gateway's `name` behind its namespace (`mcp__vera__read_file`, `vera_read_file`). */
function behindGateway(listed: string, name: string, gatewayName: string): boolean {
  return (
    listed !== name &&
    listed.endsWith(name) &&
    listed
      .slice(0, -name.length)
      .replace(/[_.:/-]+$/, '')
      .endsWith(gatewayName)
  );
}

function fromGateway(tool: OfferedTool, gatewayName: string, gatewayTools: ReadonlySet<string>, offered: readonly OfferedTool[]): boolean {
  if (tool.namespace !== undefined) return tool.namespace.includes(gatewayName) && gatewayTools.has(tool.name);
  for (const name of gatewayTools) {
    // A bare name is the gateway's unless the program also lists the gateway's tool behind its
    // namespace: then the bare one is the program's own (Hermes' read_file beside mcp__vera__read_file).
    if (tool.name === name) return !offered.some((o) => behindGateway(o.name, name, gatewayName));
    if (behindGateway(tool.name, name, gatewayName)) return true;
  }
  return false;
}

/**
 * The log filed under the run's turns: a request belongs to the last turn whose user message
 * came before it (`turnStarts`, ms since the epoch, turn 1 first); earlier ones to turn 0.
 */
export function offeredByTurn(log: ModelRequestLog, turnStarts: readonly number[], gateway: { name: string; tools: readonly string[] }): Offered {
  const tools = new Set(gateway.tools);
  const prompts = log.prompts.map((p) => ({ ...p, tools: p.tools.map((t) => (fromGateway(t, gateway.name, tools, p.tools) ? { ...t, gateway: true } : t)) }));
  const turns = new Map<number, { turn: number; requests: number; prompts: Set<number>; models: Set<string> }>();
  for (const r of log.requests) {
    let turn = 0;
    while (turn < turnStarts.length && turnStarts[turn]! <= r.at) turn++;
    let entry = turns.get(turn);
    if (!entry) turns.set(turn, (entry = { turn, requests: 0, prompts: new Set(), models: new Set() }));
    entry.requests++;
    entry.prompts.add(r.prompt);
    entry.models.add(r.model);
  }
  return {
    prompts,
    turns: [...turns.values()]
      .sort((a, b) => a.turn - b.turn)
      .map((t) => ({ turn: t.turn, requests: t.requests, prompts: [...t.prompts], models: [...t.models] })),
    ...(log.unlogged > 0 ? { unlogged: log.unlogged } : {}),
  };
}
