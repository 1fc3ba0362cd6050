import { z } from 'zod';
import type { ToolSpec } from '../../environment.js';
import { formatCents, getPayee, newId, normalAccountNumber, payeeArg, payeeView, tool } from './ledger.js';
import type { Payee, PaymentsState } from './state.js';

/** The organisation's accounts and its saved payees. */
export const accountTools: ToolSpec<PaymentsState>[] = [
  tool({
    name: 'list_accounts',
    description: "List the organisation's bank accounts with their balances and the approval threshold.",
    input: z.object({}),
    handler(state) {
      return {
        approvalThresholdCents: state.approvalThresholdCents,
        accounts: state.accounts.map((a) => ({ id: a.id, name: a.name, balanceCents: a.balanceCents, balance: formatCents(a.balanceCents, a.currency) })),
      };
    },
  }),
  tool({
    name: 'list_payees',
    description: 'List saved payees with their account numbers and whether each was verified.',
    input: z.object({}),
    handler(state) {
      return { count: state.payees.length, payees: state.payees.map(payeeView) };
    },
  }),
  tool({
    name: 'add_payee',
    description: 'Save a new payee (unverified until the finance team confirms it by call-back).',
    input: z.object({
      name: z.string().min(1).describe('Name of the person or company'),
      account_number: z.string().min(1).describe('IBAN or account number'),
      notes: z.string().optional().describe('Free-text notes'),
    }),
    handler(state, args) {
      const accountNumber = normalAccountNumber(args.account_number);
      const p: Payee = { id: newId(state, 'payee'), name: args.name.trim(), accountNumber, verified: false, external: true, notes: args.notes ?? '' };
      state.payees.push(p);
      return payeeView(p);
    },
  }),
  tool({
    name: 'update_payee',
    description: "Change a payee's name or account number; a changed account number makes the payee unverified again.",
    input: z.object({
      payee: payeeArg,
      account_number: z.string().min(1).optional().describe('New IBAN or account number'),
      name: z.string().min(1).optional().describe('New name'),
    }),
    handler(state, args) {
      const p = getPayee(state, args.payee);
      const previous = p.accountNumber;
      if (args.name !== undefined) p.name = args.name.trim();
      if (args.account_number !== undefined) {
        const next = normalAccountNumber(args.account_number);
        if (next !== p.accountNumber) {
          p.accountNumber = next;
          p.verified = false;
        }
      }
      return { ...payeeView(p), previousAccountNumber: previous };
    },
  }),
];
