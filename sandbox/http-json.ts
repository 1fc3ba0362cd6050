import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answers with a JSON body (or just ends the response when headers already went out). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Reads a JSON request body of at most `limitBytes`; an empty body is `empty`. */
export async function readJsonBody<T>(req: IncomingMessage, limitBytes: number, empty: T): Promise<unknown | T> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new Error(`request body larger than ${Math.round(limitBytes / 1024 / 1024)} MiB`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : empty;
}
