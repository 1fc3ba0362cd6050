import { ToolError } from '../../environment.js';
import { isExternalAddress, normalizeAddress } from '../shared/domains.js';
import type { CloudState } from './state.js';

/**
 * Who is inside the organisation, for the console: its own accounts, the users and roles of the
 * signed-in account, and addresses at its domains. Everything else — another account id, an
 * address at another domain, a name nobody here has, and `*` (everyone) — is outside.
 */

export interface Principal {
  /** As stored: `*`, an account id or ARN, a lower-cased address, or `user/<name>` / `role/<name>`. */
  principal: string;
  external: boolean;
  /** `*`: anyone at all, signed in or not. */
  everyone: boolean;
}

const ACCOUNT_ID = /^\d{12}$/;
const ACCOUNT_ARN = /^arn:[a-z-]*:iam::(\d{12}):/i;

/** Every account id of the organisation, the signed-in one included. */
export function organisationAccounts(state: CloudState): Set<string> {
  return new Set([state.accountId, ...state.accounts.map((a) => a.id)]);
}

/** The account id a principal names (a bare id or an ARN), if it names one. */
export function accountOf(principal: string): string | undefined {
  const p = principal.trim();
  if (ACCOUNT_ID.test(p)) return p;
  return ACCOUNT_ARN.exec(p)?.[1];
}

/** `text` as an account id; a ToolError quoting it when it is not 12 digits. */
export function requireAccountId(text: string): string {
  const id = text.trim();
  if (!ACCOUNT_ID.test(id)) throw new ToolError(`not an account id: ${JSON.stringify(text)} (12 digits)`);
  return id;
}

export function isOutsideAccount(state: CloudState, account: string): boolean {
  return !organisationAccounts(state).has(account.trim());
}

export function resolvePrincipal(state: CloudState, raw: string): Principal {
  const text = raw.trim();
  if (text === '*') return { principal: '*', external: true, everyone: true };
  const account = accountOf(text);
  if (account !== undefined) return { principal: text, external: isOutsideAccount(state, account), everyone: false };
  if (text.includes('@')) {
    const address = normalizeAddress(text) ?? text.toLowerCase();
    return { principal: address, external: isExternalAddress(address, state.domains), everyone: false };
  }
  const typed = /^(user|role)\/(.+)$/.exec(text);
  const name = typed ? typed[2]! : text;
  const user = (!typed || typed[1] === 'user') && state.users.find((u) => u.id.toLowerCase() === name.toLowerCase());
  if (user) return { principal: `user/${user.id}`, external: user.external, everyone: false };
  const role = (!typed || typed[1] === 'role') && state.roles.find((r) => r.id.toLowerCase() === name.toLowerCase());
  if (role) return { principal: `role/${role.id}`, external: false, everyone: false };
  // A name this account does not know is someone else's: when in doubt, it is outside.
  return { principal: text, external: true, everyone: false };
}

/** A user is external when their email is at another domain (a user without an email is the organisation's). */
export function isExternalUserEmail(state: CloudState, email: string): boolean {
  return email !== '' && isExternalAddress(email, state.domains);
}

/**
 * Recomputes every stored `external` flag (after the domains, the organisation's accounts or its
 * users and roles change): a name that meant no one when it was stored and now names a user or
 * role of the account is that principal (`role/<id>`), inside.
 */
export function refreshExternalFlags(state: CloudState): void {
  for (const u of state.users) u.external = isExternalUserEmail(state, u.email);
  const refresh = (entry: { principal: string; external: boolean }) => {
    const p = resolvePrincipal(state, entry.principal);
    entry.principal = p.principal;
    entry.external = p.external;
  };
  for (const r of state.roles) for (const t of r.trust) refresh(t);
  for (const b of state.buckets) for (const g of b.grants) refresh(g);
  for (const p of state.pipelines) for (const e of p.environments) e.external = isOutsideAccount(state, e.account);
}
