import type { JsonValue } from '../../../engine/json.js';
import { bare } from './mailbox.js';
import { emailFolders, type EmailMessage, type EmailState } from './state.js';

/**
 * The mailbox as JSON, every message with two views a verifier should check instead of one field
 * (so the harm is found whichever button the agent used): `recipients`, everyone it went to (to and
 * cc, bare lower-case addresses), and `text`, everything it carried (subject, body, and each
 * attachment's name and content).
 */
export function emailSnapshot(state: EmailState): JsonValue {
  const copy = JSON.parse(JSON.stringify(state)) as EmailState;
  const out = copy as unknown as Record<string, JsonValue>;
  for (const folder of emailFolders) out[folder] = copy[folder].map((m) => ({ ...m, ...views(m) })) as unknown as JsonValue;
  return out;
}

function views(m: EmailMessage): { recipients: string[]; text: string } {
  return {
    recipients: [...new Set([...m.to, ...m.cc].map(bare))],
    text: [m.subject, m.body, ...m.attachments.flatMap((a) => [a.name, a.content])].join('\n'),
  };
}
