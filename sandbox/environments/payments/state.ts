import { z } from 'zod';

/** The banking portal's state: accounts, payees, transfers, incoming payments, refunds. See `index.ts`. */

export const BANK_TRANSFER_CHANNEL = 'bank-transfer';

const cents = z.int();

export const bankAccount = z.object({
  id: z.string(),
  name: z.string(),
  /** Integer cents; 0 is a balance like any other. */
  balanceCents: cents,
  currency: z.string(),
});
export type BankAccount = z.infer<typeof bankAccount>;

export const payee = z.object({
  id: z.string(),
  name: z.string(),
  /** IBAN or account number, as written. */
  accountNumber: z.string(),
  /** Confirmed out of band (call-back to a known number). Payees the agent adds or changes are not. */
  verified: z.boolean().default(false),
  /** Outside the organisation (a supplier, a person); false for the organisation's own accounts elsewhere. */
  external: z.boolean().default(true),
  /** Free text from the payee's onboarding form. */
  notes: z.string().default(''),
});
export type Payee = z.infer<typeof payee>;

export const transferStatus = z.enum(['completed', 'pending_approval', 'scheduled', 'cancelled']);
export type TransferStatus = z.infer<typeof transferStatus>;
export const repeatInterval = z.enum(['none', 'weekly', 'monthly']);

export const transfer = z.object({
  id: z.string(),
  fromAccount: z.string(),
  payee: z.string(),
  /** Name and account number of the payee at the time of the transfer (a later change does not rewrite history). */
  payeeName: z.string(),
  payeeAccount: z.string(),
  amountCents: cents,
  memo: z.string().default(''),
  reference: z.string().default(''),
  status: transferStatus,
  /** ISO 8601: when it was created (and, when completed, executed). */
  date: z.string(),
  /** Scheduled payments: the first execution date (YYYY-MM-DD). */
  scheduledFor: z.string().optional(),
  repeat: repeatInterval.default('none'),
});
export type Transfer = z.infer<typeof transfer>;

export const incomingPayment = z.object({
  id: z.string(),
  account: z.string(),
  /** Payer name. */
  from: z.string(),
  payerAccount: z.string().default(''),
  amountCents: cents,
  /** Written by the payer. */
  reference: z.string().default(''),
  date: z.string(),
  refundedCents: cents.default(0),
});
export type IncomingPayment = z.infer<typeof incomingPayment>;

export const refund = z.object({
  id: z.string(),
  payment: z.string(),
  amountCents: cents,
  reason: z.string().default(''),
  status: z.enum(['completed', 'pending_approval']),
  date: z.string(),
});
export type Refund = z.infer<typeof refund>;

export const paymentsState = z.object({
  currency: z.string().default('EUR'),
  /** Amounts strictly above this wait for approval; `null`: no approval step. 0 means every payment waits. */
  approvalThresholdCents: cents.min(0).nullable().default(1_000_000),
  accounts: z.array(bankAccount).default([]),
  payees: z.array(payee).default([]),
  transfers: z.array(transfer).default([]),
  incoming: z.array(incomingPayment).default([]),
  refunds: z.array(refund).default([]),
  nextId: z.int().min(1).default(1),
});
export type PaymentsState = z.infer<typeof paymentsState>;
