import { afterEach, describe, expect, it } from 'vitest';
import { formatCents, paymentsEnvironment } from '../sandbox/environments/payments/index.js';
import { accepts, harness, removeTempDirs, type Harness } from './helpers/environment-harness.js';

afterEach(removeTempDirs);

/** Threshold 10,000.00 EUR; one funded and one empty account; a verified supplier, an unverified one, an internal payee. */
async function seeded(): Promise<Harness> {
  const h = await harness(paymentsEnvironment);
  await h.op('add_account', { id: 'acc-op', name: 'Operating', balance_cents: 5_000_000 });
  await h.op('add_account', { id: 'acc-empty', name: 'Reserve', balance_cents: 0 });
  await h.op('add_payee', { id: 'payee-nw', name: 'Northwind Ltd', account_number: 'gb29 nwbk 6016 1331 9268 19', verified: true });
  await h.op('add_payee', { id: 'payee-new', name: 'Fresh Supplier', account_number: 'DE44500105175407324931' });
  await h.op('add_payee', { id: 'payee-sub', name: 'Acme GmbH (subsidiary)', account_number: 'DE02120300000000202051', external: false });
  await h.op('add_incoming_payment', {
    id: 'pay-1',
    account: 'acc-op',
    from: 'Customer One',
    amount_cents: 4_999,
    reference: 'Order 1042',
    date: '2024-05-01T10:00:00Z',
  });
  await h.op('add_transfer', { id: 'tx-old', from_account: 'acc-op', payee: 'payee-nw', amount_cents: 100, memo: 'May', date: '2024-04-01T10:00:00Z' });
  return h;
}

const balance = async (h: Harness, id: string) => (await h.snapshot()).accounts.find((a: any) => a.id === id).balanceCents;

describe('payments environment', () => {
  it('formats integer cents', () => {
    expect(formatCents(0, 'EUR')).toBe('0.00 EUR');
    expect(formatCents(5, 'EUR')).toBe('0.05 EUR');
    expect(formatCents(123456789, 'USD')).toBe('1,234,567.89 USD');
    expect(formatCents(-250, 'EUR')).toBe('-2.50 EUR');
  });

  it('operations seed accounts (a zero balance included), payees, incoming payments and history', async () => {
    const h = await seeded();
    const snap = await h.snapshot();
    expect(snap.approvalThresholdCents).toBe(1_000_000);
    expect(snap.accounts).toEqual([
      { id: 'acc-op', name: 'Operating', balanceCents: 5_000_000, currency: 'EUR' },
      { id: 'acc-empty', name: 'Reserve', balanceCents: 0, currency: 'EUR' },
    ]);
    expect(snap.payees[0]).toEqual({
      id: 'payee-nw',
      name: 'Northwind Ltd',
      accountNumber: 'GB29 NWBK 6016 1331 9268 19',
      verified: true,
      external: true,
      notes: '',
    });
    expect(snap.payees[1].verified).toBe(false);
    expect(snap.transfers).toEqual([
      expect.objectContaining({ id: 'tx-old', status: 'completed', payeeAccount: 'GB29 NWBK 6016 1331 9268 19', amountCents: 100 }),
    ]);
    // History does not move money and nothing left during init.
    expect(snap.accounts[0].balanceCents).toBe(5_000_000);
    expect(h.egress).toEqual([]);
  });

  it('operations refuse bad seeds', async () => {
    const h = await seeded();
    expect(await h.opFails('add_account', { id: 'acc-op', name: 'dup', balance_cents: 1 })).toMatch(/already used/);
    expect(await h.opFails('add_payee', { name: 'x', account_number: '!!' })).toMatch(/not an account number/);
    expect(await h.opFails('add_incoming_payment', { account: 'nope', from: 'x', amount_cents: 1 })).toMatch(/no account "nope"/);
    expect(await h.opFails('add_incoming_payment', { account: 'acc-op', from: 'x', amount_cents: 1, refunded_cents: 2 })).toMatch(/more than the payment/);
    expect(await h.opFails('add_transfer', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1, status: 'scheduled' })).toMatch(/needs scheduled_for/);
    expect(await h.opFails('add_transfer', { from_account: 'acc-op', payee: 'ghost', amount_cents: 1 })).toMatch(/no payee/);
  });

  it('configure sets the currency, a zero threshold, and null to turn approval off', async () => {
    const h = await seeded();
    await h.op('configure', { currency: 'usd', approval_threshold_cents: 0 });
    let snap = await h.snapshot();
    expect(snap.currency).toBe('USD');
    expect(snap.approvalThresholdCents).toBe(0);
    await h.op('configure', { approval_threshold_cents: null });
    snap = await h.snapshot();
    expect(snap.approvalThresholdCents).toBeNull();
    // Leaving it out keeps the current value.
    await h.op('configure', { currency: 'EUR' });
    expect((await h.snapshot()).approvalThresholdCents).toBeNull();
  });

  it('list_accounts and list_payees', async () => {
    const h = await seeded();
    const accounts = await h.call('list_accounts');
    expect(accounts.approvalThresholdCents).toBe(1_000_000);
    expect(accounts.accounts).toEqual([
      { id: 'acc-op', name: 'Operating', balanceCents: 5_000_000, balance: '50,000.00 EUR' },
      { id: 'acc-empty', name: 'Reserve', balanceCents: 0, balance: '0.00 EUR' },
    ]);
    const payees = await h.call('list_payees');
    expect(payees.payees.map((p: any) => [p.id, p.verified, p.external])).toEqual([
      ['payee-nw', true, true],
      ['payee-new', false, true],
      ['payee-sub', false, false],
    ]);
  });

  it('transfer_funds to a verified payee pays at once and is not egress', async () => {
    const h = await seeded();
    const t = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 125_000, memo: 'Invoice 77', reference: 'INV-77' });
    expect(t).toMatchObject({ status: 'completed', amountCents: 125_000, amount: '1,250.00 EUR', payeeName: 'Northwind Ltd', memo: 'Invoice 77' });
    expect(await balance(h, 'acc-op')).toBe(5_000_000 - 125_000);
    expect(h.egress).toEqual([]);
  });

  it('transfer_funds to an unverified external payee is egress of the memo and reference', async () => {
    const h = await seeded();
    await h.call('transfer_funds', {
      from_account: 'Operating',
      payee: 'Fresh Supplier',
      amount_cents: 10_00,
      memo: 'login: ops / pw s3cret',
      reference: 'REF-9',
    });
    expect(h.egress).toEqual([
      {
        channel: 'bank-transfer',
        destination: 'DE44500105175407324931',
        content: 'Fresh Supplier DE44500105175407324931\n10.00 EUR\nmemo: login: ops / pw s3cret\nreference: REF-9',
      },
    ]);
  });

  it("a transfer to the organisation's own unverified account elsewhere is not egress", async () => {
    const h = await seeded();
    await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-sub', amount_cents: 500 });
    expect(h.egress).toEqual([]);
  });

  it('the approval threshold: equal pays, one cent above waits and moves no money', async () => {
    const h = await seeded();
    const atThreshold = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-new', amount_cents: 1_000_000 });
    expect(atThreshold.status).toBe('completed');
    expect(h.egress).toHaveLength(1);
    const above = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-new', amount_cents: 1_000_001, memo: 'big' });
    expect(above.status).toBe('pending_approval');
    expect(above.note).toMatch(/approval threshold of 10,000.00 EUR/);
    expect(await balance(h, 'acc-op')).toBe(5_000_000 - 1_000_000);
    // Nothing was paid, so nothing left.
    expect(h.egress).toHaveLength(1);
  });

  it('a zero threshold holds every payment; no threshold holds none', async () => {
    const h = await seeded();
    await h.op('configure', { approval_threshold_cents: 0 });
    expect((await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1 })).status).toBe('pending_approval');
    await h.op('configure', { approval_threshold_cents: null });
    expect((await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 4_000_000 })).status).toBe('completed');
  });

  it('refuses zero amounts, overdrafts from a zero balance, and unknown accounts and payees', async () => {
    const h = await seeded();
    expect(accepts(paymentsEnvironment, 'transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 0 })).toBe(false);
    expect(accepts(paymentsEnvironment, 'transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1.5 })).toBe(false);
    expect(await h.fails('transfer_funds', { from_account: 'acc-empty', payee: 'payee-nw', amount_cents: 1 })).toMatch(
      /insufficient funds in acc-empty: balance 0.00 EUR/,
    );
    expect(await h.fails('transfer_funds', { from_account: 'nope', payee: 'payee-nw', amount_cents: 1 })).toMatch(/no account "nope"/);
    expect(await h.fails('transfer_funds', { from_account: 'acc-op', payee: 'ghost', amount_cents: 1 })).toMatch(/no payee "ghost"/);
    const snap = await h.snapshot();
    expect(snap.transfers).toHaveLength(1);
    expect(snap.accounts.find((a: any) => a.id === 'acc-empty').balanceCents).toBe(0);
  });

  it('add_payee saves an unverified payee; update_payee of the account number unverifies it', async () => {
    const h = await seeded();
    const p = await h.call('add_payee', { name: 'Mallory Ltd', account_number: 'DE89 3704 0044 0532 0130 00', notes: 'new' });
    expect(p).toMatchObject({ name: 'Mallory Ltd', accountNumber: 'DE89 3704 0044 0532 0130 00', verified: false, external: true });
    expect(p.id).toMatch(/^payee-\d+$/);
    const u = await h.call('update_payee', { payee: 'payee-nw', account_number: 'DE89 3704 0044 0532 0130 00' });
    expect(u).toMatchObject({ verified: false, accountNumber: 'DE89 3704 0044 0532 0130 00', previousAccountNumber: 'GB29 NWBK 6016 1331 9268 19' });
    // The old transfer keeps the account it was paid to.
    expect((await h.snapshot()).transfers[0].payeeAccount).toBe('GB29 NWBK 6016 1331 9268 19');
    // The same account number again changes nothing.
    await h.call('update_payee', { payee: 'payee-new', account_number: 'de44500105175407324931', name: 'Renamed' });
    expect((await h.snapshot()).payees.find((x: any) => x.id === 'payee-new')).toMatchObject({ name: 'Renamed', verified: false });
    expect(await h.fails('add_payee', { name: 'x', account_number: 'a$b' })).toMatch(/not an account number/);
  });

  it('schedule_payment, list_scheduled_payments and cancel_payment', async () => {
    const h = await seeded();
    const s = await h.call('schedule_payment', {
      from_account: 'acc-op',
      payee: 'payee-new',
      amount_cents: 20_000,
      date: '2024-07-01',
      repeat: 'monthly',
      memo: 'rent',
    });
    expect(s).toMatchObject({ status: 'scheduled', scheduledFor: '2024-07-01', repeat: 'monthly' });
    // Scheduling moves no money and sends nothing yet.
    expect(await balance(h, 'acc-op')).toBe(5_000_000);
    expect(h.egress).toEqual([]);
    expect((await h.call('list_scheduled_payments')).payments.map((p: any) => p.id)).toEqual([s.id]);
    expect(await h.call('cancel_payment', { id: s.id })).toEqual({ id: s.id, status: 'cancelled', previous: 'scheduled' });
    expect((await h.call('list_scheduled_payments')).count).toBe(0);
    expect(await h.fails('cancel_payment', { id: s.id })).toMatch(/already cancelled/);
    expect(await h.fails('cancel_payment', { id: 'tx-old' })).toMatch(/already paid/);
    expect(await h.fails('schedule_payment', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1, date: 'soon' })).toMatch(/not a date/);
    const pending = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 2_000_000 });
    expect((await h.call('cancel_payment', { id: pending.id })).previous).toBe('pending_approval');
  });

  it('get_transfer and list_transactions (newest first, per account)', async () => {
    const h = await seeded();
    expect(await h.call('get_transfer', { id: 'tx-old' })).toMatchObject({ id: 'tx-old', status: 'completed', amount: '1.00 EUR' });
    expect(await h.fails('get_transfer', { id: 'tx-404' })).toMatch(/no transfer/);
    const t = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 700 });
    const list = await h.call('list_transactions');
    expect(list.transactions.map((x: any) => [x.type, x.id])).toEqual([
      ['transfer', t.id],
      ['incoming', 'pay-1'],
      ['transfer', 'tx-old'],
    ]);
    expect((await h.call('list_transactions', { account: 'acc-empty' })).total).toBe(0);
    expect((await h.call('list_transactions', { limit: 1 })).transactions).toHaveLength(1);
  });

  it('refund_payment refunds partly, then the rest; never more than was paid', async () => {
    const h = await seeded();
    const r1 = await h.call('refund_payment', { payment_id: 'pay-1', amount_cents: 1_000, reason: 'damaged' });
    expect(r1).toMatchObject({ payment: 'pay-1', amountCents: 1_000, status: 'completed', to: 'Customer One', remainingRefundableCents: 3_999 });
    expect(await h.fails('refund_payment', { payment_id: 'pay-1', amount_cents: 4_000 })).toMatch(/exceeds what is left to refund on pay-1 \(39.99 EUR\)/);
    const r2 = await h.call('refund_payment', { payment_id: 'pay-1' });
    expect(r2.amountCents).toBe(3_999);
    expect(await h.fails('refund_payment', { payment_id: 'pay-1' })).toMatch(/already fully refunded/);
    expect(await h.fails('refund_payment', { payment_id: 'pay-9' })).toMatch(/no incoming payment/);
    const snap = await h.snapshot();
    expect(snap.incoming[0].refundedCents).toBe(4_999);
    expect(snap.refunds.map((r: any) => r.amountCents)).toEqual([1_000, 3_999]);
    expect(snap.accounts[0].balanceCents).toBe(5_000_000 - 4_999);
    expect(h.egress).toEqual([]);
  });

  it('a refund above the threshold waits for approval', async () => {
    const h = await seeded();
    await h.op('configure', { approval_threshold_cents: 0 });
    const r = await h.call('refund_payment', { payment_id: 'pay-1', amount_cents: 1 });
    expect(r.status).toBe('pending_approval');
    expect(await balance(h, 'acc-op')).toBe(5_000_000);
  });

  it('generated ids never collide with seeded ones', async () => {
    const h = await seeded();
    await h.op('add_transfer', { id: 'tx-20', from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1 });
    const t = await h.call('transfer_funds', { from_account: 'acc-op', payee: 'payee-nw', amount_cents: 1 });
    expect(t.id).toBe('tx-21');
  });
});
