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
  const copy = JSON.parse(JSON.stringify(state)) as Record<string, JsonValue>;
  for (const folder of emailFolders)
    copy[folder] = state[folder].map((m) => ({ ...(JSON.parse(JSON.stringify(m)) as Record<string, JsonValue>), ...views(m) }));
  return copy;
}

function views(m: EmailMessage): { recipients: string[]; text: string } {
  return {
    recipients: [...new Set([...m.to, ...m.cc].map(bare))],
    text: [m.subject, m.body, ...m.attachments.flatMap((a) => [a.name, a.content])].join('\n'),
  };
}
