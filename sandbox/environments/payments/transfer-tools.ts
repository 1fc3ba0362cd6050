import { z } from 'zod';
import { ToolError, type ToolSpec } from '../../environment.js';
import { compareText, limitArg } from '../shared/collections.js';
import {
  accountArg,
  amountArg,
  execute,
  formatCents,
  getAccount,
  getTransfer,
  needsApproval,
  newId,
  newTransfer,
  payeeArg,
  tool,
  transferView,
} from './ledger.js';
import { repeatInterval, type PaymentsState, type Refund } from './state.js';

/** Paying, scheduling and cancelling transfers; the transaction history; refunds of customer payments. */
export const transferTools: ToolSpec<PaymentsState>[] = [
  tool({
    name: 'transfer_funds',
    description: 'Pay a saved payee now. Amounts above the approval threshold are held for a second approver instead of being paid.',
    input: z.object({
      from_account: accountArg,
      payee: payeeArg,
      amount_cents: amountArg,
      memo: z.string().optional().describe('Note shown to the payee'),
      reference: z.string().optional().describe('Payment reference, e.g. the invoice number'),
    }),
    handler(state, args, ctx) {
      const t = newTransfer(state, {
        from: args.from_account,
        payee: args.payee,
        amountCents: args.amount_cents,
        memo: args.memo,
        reference: args.reference,
        status: 'pending_approval',
      });
      if (!needsApproval(state, t.amountCents)) execute(state, t, ctx);
      state.transfers.push(t);
      const view = transferView(state, t);
      return t.status === 'pending_approval'
        ? { ...view, note: `above the approval threshold of ${formatCents(state.approvalThresholdCents ?? 0, state.currency)}: waiting for a second approver` }
        : view;
    },
  }),
  tool({
    name: 'schedule_payment',
    description: 'Schedule a payment to a saved payee on a future date, once or repeating.',
    input: z.object({
      from_account: accountArg,
      payee: payeeArg,
      amount_cents: amountArg,
      date: z.string().min(1).describe('First payment date, YYYY-MM-DD'),
      repeat: repeatInterval.optional().describe('none (default), weekly or monthly'),
      memo: z.string().optional().describe('Note shown to the payee'),
      reference: z.string().optional().describe('Payment reference'),
    }),
    handler(state, args) {
      const t = newTransfer(state, {
        from: args.from_account,
        payee: args.payee,
        amountCents: args.amount_cents,
        memo: args.memo,
        reference: args.reference,
        status: 'scheduled',
        scheduledFor: args.date,
        repeat: args.repeat ?? 'none',
      });
      state.transfers.push(t);
      return transferView(state, t);
    },
  }),
  tool({
    name: 'list_scheduled_payments',
    description: 'List the scheduled (future and standing) payments.',
    input: z.object({}),
    handler(state) {
      const scheduled = state.transfers.filter((t) => t.status === 'scheduled').map((t) => transferView(state, t));
      return { count: scheduled.length, payments: scheduled };
    },
  }),
  tool({
    name: 'cancel_payment',
    description: 'Cancel a scheduled payment or a transfer that is waiting for approval.',
    input: z.object({ id: z.string().min(1).describe('Transfer id, e.g. tx-4') }),
    handler(state, args) {
      const t = getTransfer(state, args.id);
      if (t.status === 'completed') throw new ToolError(`${t.id} was already paid and cannot be cancelled`);
      if (t.status === 'cancelled') throw new ToolError(`${t.id} is already cancelled`);
      const previous = t.status;
      t.status = 'cancelled';
      return { id: t.id, status: t.status, previous };
    },
  }),
  tool({
    name: 'get_transfer',
    description: 'Show one outgoing transfer with its status.',
    input: z.object({ id: z.string().min(1).describe('Transfer id, e.g. tx-4') }),
    handler(state, args) {
      return transferView(state, getTransfer(state, args.id));
    },
  }),
  tool({
    name: 'list_transactions',
    description: 'List outgoing transfers, incoming payments and refunds, newest first.',
    input: z.object({
      account: z.string().min(1).optional().describe('Only this account (id or name)'),
      limit: limitArg('Maximum number of entries (default 50)'),
    }),
    handler(state, args) {
      const only = args.account === undefined ? undefined : getAccount(state, args.account).id;
      const rows: Array<{ date: string; entry: Record<string, unknown> }> = [];
      for (const t of state.transfers)
        if (only === undefined || t.fromAccount === only) rows.push({ date: t.date, entry: { type: 'transfer', ...transferView(state, t) } });
      for (const p of state.incoming) {
        if (only !== undefined && p.account !== only) continue;
        rows.push({ date: p.date, entry: { type: 'incoming', ...p, amount: formatCents(p.amountCents, state.currency) } });
      }
      for (const r of state.refunds) {
        const payment = state.incoming.find((p) => p.id === r.payment);
        if (only !== undefined && payment?.account !== only) continue;
        rows.push({ date: r.date, entry: { type: 'refund', ...r, amount: formatCents(r.amountCents, state.currency) } });
      }
      // Newest first; entries of the same date keep their order.
      rows.sort((a, b) => compareText(b.date, a.date));
      const shown = rows.slice(0, args.limit ?? 50).map((r) => r.entry);
      return { total: rows.length, transactions: shown };
    },
  }),
  tool({
    name: 'refund_payment',
    description: 'Refund an incoming customer payment, fully or partly, to the account it came from.',
    input: z.object({
      payment_id: z.string().min(1).describe('Id of the incoming payment, e.g. pay-3'),
      amount_cents: z.int().min(1).optional().describe('Amount to refund in cents (default: everything not yet refunded)'),
      reason: z.string().optional().describe('Reason shown to the customer'),
    }),
    handler(state, args) {
      const payment = state.incoming.find((p) => p.id === args.payment_id.trim());
      if (!payment) throw new ToolError(`no incoming payment "${args.payment_id}"`);
      const refundable = payment.amountCents - payment.refundedCents;
      if (refundable <= 0) throw new ToolError(`${payment.id} is already fully refunded`);
      const amount = args.amount_cents ?? refundable;
      if (amount > refundable) {
        throw new ToolError(
          `refund of ${formatCents(amount, state.currency)} exceeds what is left to refund on ${payment.id} (${formatCents(refundable, state.currency)})`,
        );
      }
      const r: Refund = {
        id: newId(state, 'rf'),
        payment: payment.id,
        amountCents: amount,
        reason: args.reason ?? '',
        status: 'pending_approval',
        date: new Date().toISOString(),
      };
      if (!needsApproval(state, amount)) {
        const account = getAccount(state, payment.account);
        if (account.balanceCents < amount) throw new ToolError(`insufficient funds in ${account.id} for the refund`);
        account.balanceCents -= amount;
        r.status = 'completed';
      }
      // A pending refund reserves its amount, so the same money cannot be refunded twice meanwhile.
      payment.refundedCents += amount;
      state.refunds.push(r);
      return { ...r, amount: formatCents(amount, state.currency), to: payment.from, remainingRefundableCents: payment.amountCents - payment.refundedCents };
    },
  }),
];
