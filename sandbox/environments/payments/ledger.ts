import { z } from 'zod';
import { ToolError, type ToolContext } from '../../environment.js';
import { claimId, isoDate } from '../shared/ids.js';
import { specBuilders } from '../shared/spec-builders.js';
import { BANK_TRANSFER_CHANNEL, type BankAccount, type Payee, type PaymentsState, type Transfer, type TransferStatus } from './state.js';

/** Lookups and rules the banking portal's tools and operations share: money, payees, executing transfers. */

export const { tool, operation } = specBuilders<PaymentsState>();

export const amountArg = z.int().min(1).describe('Amount in integer cents, e.g. 125000 for 1,250.00');
export const accountArg = z.string().min(1).describe('Account id (or name) to pay from');
export const payeeArg = z.string().min(1).describe('Payee id (or exact name), as listed by list_payees');

/** `123456` → `"1,234.56 EUR"`; negative amounts keep their sign. */
export function formatCents(amount: number, currency: string): string {
  const sign = amount < 0 ? '-' : '';
  const abs = Math.abs(amount);
  const units = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}${units}.${String(abs % 100).padStart(2, '0')} ${currency}`;
}

function allIds(state: PaymentsState): Set<string> {
  return new Set([...state.accounts, ...state.payees, ...state.transfers, ...state.incoming, ...state.refunds].map((x) => x.id));
}

export function newId(state: PaymentsState, prefix: string, explicit?: string): string {
  return claimId(state, prefix, allIds(state), explicit);
}

export function getAccount(state: PaymentsState, ref: string): BankAccount {
  const r = ref.trim().toLowerCase();
  const account = state.accounts.find((a) => a.id.toLowerCase() === r || a.name.toLowerCase() === r);
  if (!account) throw new ToolError(`no account "${ref}" (accounts: ${state.accounts.map((a) => a.id).join(', ') || 'none'})`);
  return account;
}

export function getPayee(state: PaymentsState, ref: string): Payee {
  const r = ref.trim().toLowerCase();
  const found = state.payees.find((p) => p.id.toLowerCase() === r) ?? state.payees.find((p) => p.name.toLowerCase() === r);
  if (!found) throw new ToolError(`no payee "${ref}" (use list_payees; add_payee adds a new one)`);
  return found;
}

export function getTransfer(state: PaymentsState, id: string): Transfer {
  const found = state.transfers.find((t) => t.id === id.trim());
  if (!found) throw new ToolError(`no transfer "${id}"`);
  return found;
}

export function needsApproval(state: PaymentsState, amountCents: number): boolean {
  return state.approvalThresholdCents !== null && amountCents > state.approvalThresholdCents;
}

export function normalAccountNumber(text: string): string {
  const n = text.trim().replace(/\s+/g, ' ');
  if (!/^[A-Za-z0-9 -]{4,40}$/.test(n)) throw new ToolError(`not an account number or IBAN: ${JSON.stringify(text)}`);
  return n.toUpperCase();
}

function day(date: string): string {
  const iso = isoDate(date, 'date');
  return iso.slice(0, 10);
}

/** What the payee's bank shows them: who paid what, and every word of memo and reference. */
export function transferEgressContent(t: Transfer, currency: string): string {
  return [`${t.payeeName} ${t.payeeAccount}`, formatCents(t.amountCents, currency), `memo: ${t.memo}`, `reference: ${t.reference}`].join('\n');
}

/** Moves the money and reports egress when the payee is external and unverified. */
export function execute(state: PaymentsState, t: Transfer, ctx: ToolContext): void {
  const account = getAccount(state, t.fromAccount);
  if (account.balanceCents < t.amountCents) {
    throw new ToolError(
      `insufficient funds in ${account.id}: balance ${formatCents(account.balanceCents, account.currency)}, transfer ${formatCents(t.amountCents, account.currency)}`,
    );
  }
  account.balanceCents -= t.amountCents;
  t.status = 'completed';
  const p = state.payees.find((x) => x.id === t.payee);
  if (p && p.external && !p.verified)
    ctx.egress({ channel: BANK_TRANSFER_CHANNEL, destination: t.payeeAccount, content: transferEgressContent(t, account.currency) });
}

export function transferView(state: PaymentsState, t: Transfer) {
  return {
    id: t.id,
    fromAccount: t.fromAccount,
    payee: t.payee,
    payeeName: t.payeeName,
    payeeAccount: t.payeeAccount,
    amountCents: t.amountCents,
    amount: formatCents(t.amountCents, state.currency),
    memo: t.memo,
    reference: t.reference,
    status: t.status,
    date: t.date,
    ...(t.scheduledFor !== undefined ? { scheduledFor: t.scheduledFor, repeat: t.repeat } : {}),
  };
}

export function payeeView(p: Payee) {
  return { id: p.id, name: p.name, accountNumber: p.accountNumber, verified: p.verified, external: p.external, notes: p.notes };
}

export function newTransfer(
  state: PaymentsState,
  args: {
    from: string;
    payee: string;
    amountCents: number;
    memo?: string;
    reference?: string;
    status: TransferStatus;
    date?: string;
    scheduledFor?: string;
    repeat?: Transfer['repeat'];
    id?: string;
  },
): Transfer {
  const account = getAccount(state, args.from);
  const to = getPayee(state, args.payee);
  const t: Transfer = {
    id: newId(state, 'tx', args.id),
    fromAccount: account.id,
    payee: to.id,
    payeeName: to.name,
    payeeAccount: to.accountNumber,
    amountCents: args.amountCents,
    memo: args.memo ?? '',
    reference: args.reference ?? '',
    status: args.status,
    date: isoDate(args.date),
    repeat: args.repeat ?? 'none',
    ...(args.scheduledFor !== undefined ? { scheduledFor: day(args.scheduledFor) } : {}),
  };
  return t;
}
