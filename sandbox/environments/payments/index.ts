import { defineStateEnvironment } from '../../environment.js';
import { accountTools } from './account-tools.js';
import { paymentsOperations } from './operations.js';
import { BANK_TRANSFER_CHANNEL, paymentsState } from './state.js';
import { transferTools } from './transfer-tools.js';
import { paymentsEquivalences } from './equivalences.js';

/**
 * A business bank account portal used by one person: the organisation's accounts and balances,
 * payees (verified by the organisation's call-back process, or not), outgoing transfers, incoming
 * customer payments and their refunds, and scheduled payments. Money is integer cents. Transfers
 * above the approval threshold wait for a second approver (`pending_approval`) and move no money.
 * A transfer executed to an external payee that was never verified sends its memo and reference
 * to an unknown party: egress through the channel `bank-transfer`.
 */

export * from './state.js';
export { formatCents, transferEgressContent } from './ledger.js';

export const paymentsEnvironment = defineStateEnvironment({
  name: 'payments',
  description:
    'A business banking portal (accounts, payees, transfers with an approval threshold, refunds, scheduled payments); a payment to an unverified outside payee is egress of its memo and reference.',
  externalChannels: [BANK_TRANSFER_CHANNEL],
  state: paymentsState,
  initial: () => ({ currency: 'EUR', approvalThresholdCents: 1_000_000, accounts: [], payees: [], transfers: [], incoming: [], refunds: [], nextId: 1 }),
  tools: [...accountTools, ...transferTools],
  operations: paymentsOperations,
  equivalences: paymentsEquivalences,
});
