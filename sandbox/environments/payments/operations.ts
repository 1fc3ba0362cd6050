import { z } from 'zod';
import { ToolError, type OperationSpec } from '../../environment.js';
import { isoDate } from '../shared/ids.js';
import { getAccount, newId, newTransfer, normalAccountNumber, operation } from './ledger.js';
import { repeatInterval, transferStatus, type PaymentsState } from './state.js';

/** Init-script operations: currency and approval threshold, accounts, payees, and history before the run. */
export const paymentsOperations: OperationSpec<PaymentsState>[] = [
  operation({
    name: 'configure',
    description: 'Set the currency and the approval threshold (null: no approval step; 0: every payment needs approval).',
    input: z.object({
      currency: z.string().min(3).max(3).optional().describe('ISO currency code (default EUR)'),
      approval_threshold_cents: z
        .int()
        .min(0)
        .nullable()
        .optional()
        .describe('Payments above this many cents wait for approval (default 1000000); null turns approval off'),
    }),
    apply(state, args) {
      if (args.currency !== undefined) state.currency = args.currency.toUpperCase();
      if (args.approval_threshold_cents !== undefined) state.approvalThresholdCents = args.approval_threshold_cents;
    },
  }),
  operation({
    name: 'add_account',
    description: "Add one of the organisation's bank accounts with its balance.",
    input: z.object({
      id: z.string().min(1).describe('Stable id, e.g. acc-operating'),
      name: z.string().min(1).describe('Account name'),
      balance_cents: z.int().describe('Balance in cents (0 allowed)'),
      currency: z.string().min(3).max(3).optional().describe('Currency (default: the configured one)'),
    }),
    apply(state, args) {
      const id = newId(state, 'acc', args.id);
      state.accounts.push({ id, name: args.name, balanceCents: args.balance_cents, currency: (args.currency ?? state.currency).toUpperCase() });
    },
  }),
  operation({
    name: 'add_payee',
    description: 'Save a payee, verified or not.',
    input: z.object({
      name: z.string().min(1).describe('Payee name'),
      account_number: z.string().min(1).describe('IBAN or account number'),
      id: z.string().min(1).optional().describe('Stable id (default payee-<n>)'),
      verified: z.boolean().optional().describe('Confirmed by call-back (default false)'),
      external: z.boolean().optional().describe('Outside the organisation (default true)'),
      notes: z.string().optional().describe("Notes, e.g. from the payee's onboarding form"),
    }),
    apply(state, args) {
      state.payees.push({
        id: newId(state, 'payee', args.id),
        name: args.name,
        accountNumber: normalAccountNumber(args.account_number),
        verified: args.verified ?? false,
        external: args.external ?? true,
        notes: args.notes ?? '',
      });
    },
  }),
  operation({
    name: 'add_incoming_payment',
    description: 'Record a payment a customer made into one of the accounts (the balance is set separately).',
    input: z.object({
      account: z.string().min(1).describe('Account id it was paid into'),
      from: z.string().min(1).describe('Payer name'),
      amount_cents: z.int().min(1).describe('Amount in cents'),
      payer_account: z.string().optional().describe("Payer's IBAN"),
      reference: z.string().optional().describe('Reference written by the payer'),
      date: z.string().optional().describe('ISO 8601 date (default now)'),
      id: z.string().min(1).optional().describe('Stable id (default pay-<n>)'),
      refunded_cents: z.int().min(0).optional().describe('Already refunded (default 0)'),
    }),
    apply(state, args) {
      const account = getAccount(state, args.account);
      if ((args.refunded_cents ?? 0) > args.amount_cents) throw new ToolError('refunded_cents is more than the payment');
      state.incoming.push({
        id: newId(state, 'pay', args.id),
        account: account.id,
        from: args.from,
        payerAccount: args.payer_account ?? '',
        amountCents: args.amount_cents,
        reference: args.reference ?? '',
        date: isoDate(args.date),
        refundedCents: args.refunded_cents ?? 0,
      });
    },
  }),
  operation({
    name: 'add_transfer',
    description: 'Record an earlier outgoing transfer (history: balances are not changed and nothing leaves).',
    input: z.object({
      from_account: z.string().min(1).describe('Account id'),
      payee: z.string().min(1).describe('Payee id'),
      amount_cents: z.int().min(1).describe('Amount in cents'),
      status: transferStatus.optional().describe('completed (default), pending_approval, scheduled or cancelled'),
      memo: z.string().optional().describe('Memo'),
      reference: z.string().optional().describe('Reference'),
      date: z.string().optional().describe('ISO 8601 creation date (default now)'),
      scheduled_for: z.string().optional().describe('For scheduled payments: YYYY-MM-DD'),
      repeat: repeatInterval.optional().describe('For scheduled payments: none, weekly or monthly'),
      id: z.string().min(1).optional().describe('Stable id (default tx-<n>)'),
    }),
    apply(state, args) {
      const status = args.status ?? 'completed';
      if (status === 'scheduled' && args.scheduled_for === undefined) throw new ToolError('a scheduled payment needs scheduled_for');
      state.transfers.push(
        newTransfer(state, {
          from: args.from_account,
          payee: args.payee,
          amountCents: args.amount_cents,
          memo: args.memo,
          reference: args.reference,
          status,
          date: args.date,
          scheduledFor: args.scheduled_for,
          repeat: args.repeat,
          id: args.id,
        }),
      );
    },
  }),
];
