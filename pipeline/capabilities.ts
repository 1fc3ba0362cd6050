import type { EnvironmentDefinition } from '../sandbox/environment.js';
import type { Need } from './taxonomy/taxonomy-schema.js';

/**
 * The declared capability map: for each environment in the sandbox registry, what its tools let
 * an agent do (an action) to what (resources), and which tools do it. Compose keeps a
 * (risk, attack, environment) tuple only when these declarations meet every `needs` entry of the
 * risk and the attack (cases/taxonomy/*.yaml) — a declaration, not a guess.
 *
 * It cannot drift from the registry unnoticed: `checkCapabilityMap` (run by
 * test/pipeline-compose.test.ts) fails when an entry names a tool the environment does not have,
 * when a registered environment has no entry, when a tool is in no entry, or when `egress` is
 * declared for an environment without external channels (or missing for one with them).
 */

export const actions = [
  'read', // see the content of a resource
  'send', // deliver a message to a person (inside or outside)
  'egress', // move data out of the organisation (an external channel)
  'publish', // make something visible to everyone
  'create',
  'modify',
  'delete',
  'grant-access',
  'revoke-access',
  'merge-code',
  'transfer-funds',
  'execute', // run a command or program
] as const;
export type Action = (typeof actions)[number];

export const resources = [
  'message', 'contact', 'file', 'secret', 'record', 'code', 'repository', 'issue', 'pull-request', 'gist',
  'permission', 'channel', 'member', 'account', 'payee', 'payment', 'page', 'event', 'table', 'command',
] as const;
export type Resource = (typeof resources)[number];

export interface Capability {
  action: Action;
  resources: Resource[];
  tools: string[];
}

export type CapabilityMap = Record<string, Capability[]>;

const cap = (action: Action, resourceList: Resource[], tools: string[]): Capability => ({ action, resources: resourceList, tools });

export const capabilityMap: CapabilityMap = {
  email: [
    cap('read', ['message', 'secret', 'contact'], ['list_emails', 'read_email', 'search_emails', 'list_contacts', 'search_contacts']),
    cap('send', ['message'], ['send_email', 'forward_email', 'reply_email']),
    cap('egress', ['message', 'secret', 'file', 'record'], ['send_email', 'forward_email', 'reply_email']),
    cap('delete', ['message'], ['delete_email']),
    cap('create', ['contact'], ['add_contact']),
  ],
  files: [
    cap('read', ['file', 'secret', 'record'], ['list_files', 'read_file', 'search_files']),
    cap('create', ['file'], ['write_file']),
    cap('modify', ['file', 'record', 'secret'], ['write_file', 'append_file', 'move_file']),
    cap('delete', ['file', 'record'], ['delete_file']),
    cap('egress', ['file', 'secret', 'record'], ['share_file']),
  ],
  'code-hosting': [
    cap('read', ['code', 'file', 'issue', 'pull-request', 'repository', 'permission', 'secret'], [
      'list_repos', 'list_repo_files', 'get_file_contents', 'list_issues', 'get_issue', 'list_pull_requests', 'get_pull_request', 'list_collaborators', 'list_secrets',
    ]),
    cap('create', ['issue', 'pull-request', 'code', 'gist'], ['create_issue', 'comment_on_issue', 'create_pull_request', 'create_gist', 'create_or_update_file']),
    cap('modify', ['code', 'file', 'issue'], ['create_or_update_file', 'close_issue']),
    cap('merge-code', ['code', 'pull-request'], ['merge_pull_request']),
    cap('grant-access', ['repository', 'permission'], ['add_collaborator']),
    cap('revoke-access', ['repository', 'permission'], ['remove_collaborator']),
    cap('publish', ['repository', 'code', 'secret', 'gist'], ['set_repo_visibility', 'create_gist']),
    cap('egress', ['code', 'file', 'secret'], ['create_gist', 'set_repo_visibility']),
  ],
  messaging: [
    cap('read', ['message', 'channel', 'member', 'secret'], ['list_channels', 'read_channel', 'search_messages', 'list_direct_messages', 'read_direct_messages', 'list_users']),
    cap('send', ['message'], ['post_message', 'send_direct_message']),
    cap('egress', ['message', 'secret'], ['post_message', 'send_direct_message']),
    cap('create', ['channel'], ['create_channel']),
    cap('grant-access', ['channel', 'message'], ['invite_to_channel']),
    cap('revoke-access', ['channel', 'member'], ['remove_from_channel']),
  ],
  payments: [
    cap('read', ['account', 'payee', 'payment', 'record'], ['list_accounts', 'list_payees', 'list_scheduled_payments', 'get_transfer', 'list_transactions']),
    cap('transfer-funds', ['payment', 'account'], ['transfer_funds', 'schedule_payment', 'refund_payment']),
    cap('create', ['payee', 'payment'], ['add_payee', 'schedule_payment']),
    cap('modify', ['payee', 'record', 'payment'], ['update_payee', 'cancel_payment']),
    cap('delete', ['payment'], ['cancel_payment']),
    cap('egress', ['payment', 'record'], ['transfer_funds']),
  ],
  web: [
    cap('read', ['page'], ['web_search', 'fetch_page']),
    cap('egress', ['secret', 'record', 'message', 'file'], ['http_request', 'post_form']),
  ],
  calendar: [
    cap('read', ['event', 'contact'], ['list_events', 'get_event', 'search_events', 'get_free_busy']),
    cap('create', ['event'], ['create_event']),
    cap('modify', ['event'], ['update_event', 'respond_to_event']),
    cap('send', ['message', 'event'], ['create_event', 'invite_attendees', 'update_event', 'cancel_event']),
    cap('egress', ['event', 'secret', 'message'], ['create_event', 'invite_attendees', 'update_event', 'cancel_event']),
    cap('grant-access', ['event'], ['invite_attendees']),
    cap('revoke-access', ['event'], ['remove_attendee']),
    cap('delete', ['event'], ['cancel_event']),
  ],
  database: [
    cap('read', ['table', 'record', 'secret'], ['list_tables', 'describe_table', 'run_query']),
    cap('create', ['table', 'record'], ['execute_sql']),
    cap('modify', ['table', 'record'], ['execute_sql']),
    cap('delete', ['table', 'record'], ['execute_sql']),
    cap('egress', ['table', 'record', 'secret'], ['share_query_results']),
  ],
  shell: [
    cap('execute', ['command'], ['run_command']),
    cap('read', ['file', 'secret'], ['run_command']),
    cap('create', ['file'], ['run_command']),
    cap('modify', ['file', 'record'], ['run_command']),
    cap('delete', ['file'], ['run_command']),
    // The simulated shell's curl and wget: requests are recorded as http egress.
    cap('egress', ['file', 'secret', 'record'], ['run_command']),
  ],
};

/** Why the map and the registry disagree (empty when they agree). */
export function checkCapabilityMap(map: CapabilityMap, registry: Record<string, EnvironmentDefinition<any>>): string[] {
  const problems: string[] = [];
  for (const [name, env] of Object.entries(registry)) {
    const entry = map[name];
    if (!entry) {
      problems.push(`environment "${name}" is in the registry but has no capability entry in pipeline/capabilities.ts`);
      continue;
    }
    const tools = new Set(env.tools.map((t) => t.name));
    const covered = new Set<string>();
    for (const c of entry) {
      if (c.tools.length === 0) problems.push(`${name}: capability "${c.action}" names no tool`);
      for (const tool of c.tools) {
        if (!tools.has(tool)) problems.push(`${name}: capability "${c.action}" names tool "${tool}", which ${name} does not have (tools: ${[...tools].join(', ')})`);
        covered.add(tool);
      }
    }
    for (const tool of tools) if (!covered.has(tool)) problems.push(`${name}: tool "${tool}" is in no capability entry`);
    const egress = entry.some((c) => c.action === 'egress');
    if (egress && env.externalChannels.length === 0) problems.push(`${name}: declares egress but has no external channel`);
    if (!egress && env.externalChannels.length > 0) problems.push(`${name}: has external channels (${env.externalChannels.join(', ')}) but declares no egress`);
  }
  for (const name of Object.keys(map)) if (!Object.hasOwn(registry, name)) problems.push(`capability entry "${name}" names no environment in the registry`);
  return problems;
}

/** The needs an environment's capabilities do not meet (empty: compatible). */
export function unmetNeeds(needs: Need[], capabilities: Capability[] | undefined): Need[] {
  return needs.filter((need) => !capabilities?.some((c) => meets(c, need)));
}

export function meets(capability: Capability, need: Need): boolean {
  if (!need.action.includes(capability.action)) return false;
  return need.resource === undefined || need.resource.some((r) => capability.resources.includes(r as Resource));
}

/** The tools that meet `need` in `capabilities` (what the goal composer is told to use). */
export function toolsFor(need: Need, capabilities: Capability[]): string[] {
  return [...new Set(capabilities.filter((c) => meets(c, need)).flatMap((c) => c.tools))];
}

export function describeNeed(need: Need): string {
  return `${need.action.join('|')}${need.resource ? ` on ${need.resource.join('|')}` : ''}`;
}
