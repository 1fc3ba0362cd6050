import type { AnyEnvironmentDefinition } from '../sandbox/environment.js';
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
  'message',
  'contact',
  'file',
  'secret',
  'record',
  'code',
  'repository',
  'issue',
  'pull-request',
  'gist',
  'permission',
  'channel',
  'member',
  'account',
  'payee',
  'payment',
  'page',
  'event',
  'table',
  'command',
  'customer',
  'ticket',
  'credential',
  'storage',
  'deployment',
  'document',
  'folder',
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
    cap(
      'read',
      ['code', 'file', 'issue', 'pull-request', 'repository', 'permission', 'secret'],
      ['list_repos', 'list_repo_files', 'get_file_contents', 'list_issues', 'get_issue', 'list_pull_requests', 'get_pull_request', 'list_collaborators'],
    ),
    // list_secrets shows the names of a repository's secrets, never their values: it reads no secret.
    cap('read', ['record', 'permission'], ['list_secrets']),
    cap(
      'create',
      ['issue', 'pull-request', 'code', 'gist'],
      ['create_issue', 'comment_on_issue', 'create_pull_request', 'create_gist', 'create_or_update_file'],
    ),
    cap('modify', ['code', 'file', 'issue'], ['create_or_update_file', 'close_issue']),
    cap('merge-code', ['code', 'pull-request'], ['merge_pull_request']),
    cap('grant-access', ['repository', 'permission'], ['add_collaborator']),
    cap('revoke-access', ['repository', 'permission'], ['remove_collaborator']),
    cap('publish', ['repository', 'code', 'secret', 'gist'], ['set_repo_visibility', 'create_gist']),
    cap('egress', ['code', 'file', 'secret'], ['create_gist', 'set_repo_visibility']),
  ],
  messaging: [
    cap(
      'read',
      ['message', 'channel', 'member', 'secret'],
      ['list_channels', 'read_channel', 'search_messages', 'list_direct_messages', 'read_direct_messages', 'list_users'],
    ),
    cap('send', ['message'], ['post_message', 'send_direct_message']),
    cap('egress', ['message', 'secret'], ['post_message', 'send_direct_message']),
    // A posted message is a new record in a channel others read (false statements are published this way).
    cap('create', ['channel', 'message'], ['create_channel', 'post_message']),
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
    // Pages include the organisation's own intranet (wiki.corp.example): what is on them can be secret.
    cap('read', ['page', 'secret', 'record', 'file'], ['web_search', 'fetch_page']),
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
  crm: [
    cap(
      'read',
      ['customer', 'ticket', 'record', 'secret', 'member'],
      ['search_customers', 'get_customer', 'list_support_tickets', 'get_support_ticket', 'list_macros', 'list_support_agents', 'list_audit_log'],
    ),
    cap('send', ['message', 'ticket'], ['reply_to_ticket', 'forward_ticket', 'apply_macro']),
    cap('egress', ['customer', 'record', 'secret', 'message', 'ticket'], ['reply_to_ticket', 'forward_ticket', 'apply_macro', 'export_customers']),
    cap('create', ['customer', 'record', 'payment'], ['add_customer_contact', 'add_internal_note', 'create_macro', 'issue_credit']),
    cap(
      'modify',
      ['customer', 'ticket', 'record', 'account'],
      ['update_customer', 'change_customer_plan', 'update_support_ticket', 'update_macro', 'merge_customers'],
    ),
    cap('delete', ['customer', 'record'], ['delete_customer', 'merge_customers']),
    cap('transfer-funds', ['payment', 'account'], ['issue_credit']),
    cap('grant-access', ['member', 'permission'], ['add_support_agent', 'set_agent_role']),
    cap('revoke-access', ['member', 'permission'], ['set_agent_role', 'deactivate_support_agent']),
  ],
  cloud: [
    cap(
      'read',
      ['storage', 'file', 'secret', 'credential', 'permission', 'deployment', 'record', 'member'],
      [
        'list_buckets',
        'get_bucket',
        'list_objects',
        'get_object',
        'list_access_keys',
        'list_pipelines',
        'list_pipeline_runs',
        'get_pipeline_run',
        'list_iam_roles',
        'get_security_settings',
        'list_audit_events',
        'list_public_links',
        'list_iam_users',
        'get_iam_user',
        'list_iam_policies',
      ],
    ),
    cap(
      'create',
      ['storage', 'file', 'credential', 'member', 'permission'],
      ['create_bucket', 'put_object', 'create_access_key', 'create_iam_role', 'create_iam_user', 'create_public_link'],
    ),
    cap(
      'modify',
      ['file', 'deployment', 'secret', 'record', 'permission'],
      ['put_object', 'set_pipeline_variable', 'update_deploy_target', 'update_security_settings', 'set_access_key_status', 'set_inline_permissions'],
    ),
    cap(
      'delete',
      ['storage', 'file', 'credential', 'member', 'permission', 'record', 'secret'],
      ['delete_bucket', 'delete_object', 'delete_access_key', 'delete_iam_role', 'delete_iam_user', 'delete_pipeline_variable'],
    ),
    cap('execute', ['deployment', 'command'], ['trigger_deployment']),
    cap(
      'grant-access',
      ['permission', 'member', 'storage', 'credential'],
      ['attach_iam_policy', 'set_inline_permissions', 'add_role_trust', 'grant_bucket_access', 'create_access_key'],
    ),
    cap(
      'revoke-access',
      ['permission', 'member', 'storage', 'credential'],
      ['detach_iam_policy', 'remove_role_trust', 'revoke_bucket_access', 'revoke_public_link', 'set_access_key_status'],
    ),
    cap('publish', ['storage', 'file', 'secret'], ['set_bucket_visibility', 'create_public_link']),
    cap(
      'egress',
      ['storage', 'file', 'secret', 'credential', 'record'],
      ['set_bucket_visibility', 'create_public_link', 'grant_bucket_access', 'add_role_trust', 'update_deploy_target'],
    ),
  ],
  drive: [
    cap(
      'read',
      ['document', 'folder', 'file', 'secret', 'record', 'permission'],
      [
        'list_drive_items',
        'search_drive',
        'read_document',
        'list_document_versions',
        'read_document_version',
        'get_sharing_settings',
        'list_drive_trash',
        'list_drive_activity',
      ],
    ),
    cap('create', ['document', 'folder', 'file', 'record'], ['create_document', 'copy_document', 'create_drive_folder', 'add_document_comment']),
    cap(
      'modify',
      ['document', 'file', 'record', 'folder'],
      [
        'update_document',
        'append_to_document',
        'update_spreadsheet_cells',
        'append_spreadsheet_rows',
        'rename_drive_item',
        'move_drive_item',
        'restore_drive_item',
        'restore_document_version',
        'resolve_document_comment',
      ],
    ),
    cap(
      'delete',
      ['document', 'folder', 'file', 'record'],
      ['trash_drive_item', 'delete_drive_item_forever', 'empty_drive_trash', 'delete_document_version', 'delete_document_comment'],
    ),
    cap('grant-access', ['document', 'folder', 'permission'], ['share_drive_item', 'set_link_sharing', 'transfer_drive_ownership']),
    cap('revoke-access', ['document', 'folder', 'permission'], ['remove_drive_access', 'set_link_sharing']),
    cap('publish', ['document', 'file', 'secret'], ['set_link_sharing']),
    cap('send', ['message', 'document'], ['share_drive_item', 'add_document_comment']),
    cap(
      'egress',
      ['document', 'file', 'secret', 'record', 'folder'],
      ['share_drive_item', 'set_link_sharing', 'transfer_drive_ownership', 'move_drive_item', 'create_document', 'update_document'],
    ),
  ],
};

/** Why the map and the registry disagree (empty when they agree). */
export function checkCapabilityMap(map: CapabilityMap, registry: Record<string, AnyEnvironmentDefinition>): string[] {
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
        if (!tools.has(tool))
          problems.push(`${name}: capability "${c.action}" names tool "${tool}", which ${name} does not have (tools: ${[...tools].join(', ')})`);
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
