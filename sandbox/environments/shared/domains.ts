import { z } from 'zod';
import { defineOperation, ToolError, type OperationSpec } from '../../environment.js';

/**
 * Who is inside the organisation. Environments use these helpers to decide whether an action
 * sends data out (egress): mail or a share to an address outside the organisation's domains, or
 * access granted to a user outside the organisation's members.
 */

export const DEFAULT_DOMAINS: readonly string[] = ['corp.example'];

/**
 * The bare, lower-cased address in `Name <user@host>` or `user@host`; `undefined` when the text
 * is not an address (no local part, no domain, spaces, several `@`).
 */
export function normalizeAddress(text: string): string | undefined {
  let s = text.trim();
  const angle = /<([^<>]*)>\s*$/.exec(s);
  if (angle) s = angle[1]!.trim();
  if (s.toLowerCase().startsWith('mailto:')) s = s.slice('mailto:'.length);
  s = s.toLowerCase();
  if (!/^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/.test(s)) return undefined;
  const domain = s.slice(s.indexOf('@') + 1).replace(/\.$/, '');
  if (!domain || domain.startsWith('.') || domain.includes('..')) return undefined;
  return `${s.slice(0, s.indexOf('@'))}@${domain}`;
}

/** The lower-cased domain of an address, or `undefined` when it is not an address. */
export function domainOf(address: string): string | undefined {
  const normal = normalizeAddress(address);
  return normal === undefined ? undefined : normal.slice(normal.indexOf('@') + 1);
}

/** True when `domain` is one of `domains` or a subdomain of one (`eu.corp.example` is inside `corp.example`). */
export function isOrganisationDomain(domain: string, domains: readonly string[]): boolean {
  const d = domain.toLowerCase().replace(/\.$/, '');
  return domains.some((org) => {
    const o = org.toLowerCase().replace(/^@/, '').replace(/\.$/, '');
    return o.length > 0 && (d === o || d.endsWith(`.${o}`));
  });
}

/**
 * True when mail to `address` leaves the organisation. Anything that is not a well-formed
 * address counts as external: when in doubt, the data left.
 */
export function isExternalAddress(address: string, domains: readonly string[]): boolean {
  const domain = domainOf(address);
  return domain === undefined || !isOrganisationDomain(domain, domains);
}

/**
 * True when `user` is outside the organisation: neither one of its `members` (user names,
 * compared case-insensitively) nor, when it is an address, at one of its `domains`.
 */
export function isExternalUser(user: string, members: readonly string[], domains: readonly string[] = []): boolean {
  const u = user.trim().toLowerCase();
  if (members.some((m) => m.trim().toLowerCase() === u)) return false;
  if (u.includes('@')) return isExternalAddress(u, domains);
  return true;
}

/** `text` as a bare, lower-cased address; a ToolError quoting it when it is not an address. */
export function requireAddress(text: string): string {
  const address = normalizeAddress(text);
  if (address === undefined) throw new ToolError(`not an email address: ${JSON.stringify(text)}`);
  return address;
}

/** The `domains` argument of the environments' `configure` operations. */
export const organisationDomainsArg = z.array(z.string().min(1)).optional().describe('Organisation domains (default ["corp.example"])');

/** Organisation domains as the environments store them: lower-cased. */
export function normalizeDomains(domains: readonly string[]): string[] {
  return domains.map((d) => d.toLowerCase());
}

/**
 * The `configure` operation of an environment whose only setting is the organisation's domains
 * (`description` says what crossing them means there).
 */
export function configureDomainsOperation<S extends { domains: string[] }>(description: string): OperationSpec<S> {
  return defineOperation<S, z.ZodObject<{ domains: typeof organisationDomainsArg }>>({
    name: 'configure',
    description,
    input: z.object({ domains: organisationDomainsArg }),
    apply(state, args) {
      if (args.domains !== undefined) state.domains = normalizeDomains(args.domains);
    },
  });
}
