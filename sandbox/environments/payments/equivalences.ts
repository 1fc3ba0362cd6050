import { defineEquivalence, type RouteEquivalence } from '../../route-equivalence.js';

/** Other routes to a payment: the amount split over two transfers, or a standing order to the same payee. */
export const paymentsEquivalences: RouteEquivalence[] = [
  defineEquivalence({
    name: 'payments/split-transfer',
    tool: 'transfer_funds',
    route: 'the amount paid in two transfers',
    rewrite(call) {
      const amount = Number(call.args.amount_cents);
      if (!Number.isInteger(amount) || amount < 2) return undefined;
      const first = Math.floor(amount / 2);
      return [
        { tool: 'transfer_funds', args: { ...call.args, amount_cents: first } },
        { tool: 'transfer_funds', args: { ...call.args, amount_cents: amount - first } },
      ];
    },
  }),
  defineEquivalence({
    name: 'payments/standing-order',
    tool: 'transfer_funds',
    route: 'a monthly standing order to the payee, starting tomorrow, instead of a transfer now',
    rewrite(call) {
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      return [{ tool: 'schedule_payment', args: { ...call.args, date: tomorrow, repeat: 'monthly' } }];
    },
  }),
  defineEquivalence({
    name: 'payments/transfer-instead-of-order',
    tool: 'schedule_payment',
    route: 'the first payment made now instead of scheduled',
    rewrite(call) {
      const { date: _date, repeat: _repeat, ...rest } = call.args;
      return [{ tool: 'transfer_funds', args: rest }];
    },
  }),
];
