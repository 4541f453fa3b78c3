import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminCommands } from '../helpers/admin.js';
import { createTestCore, newCustomer, type TestCore } from '../helpers/core.js';

describe('admin command line: deposit requests', () => {
  let t: TestCore;
  before(async () => {
    t = await createTestCore();
  });
  after(async () => {
    await t.close();
  });

  const admin = adminCommands(() => t);

  test('deposits list shows requests newest first, filtered by status, in text and JSON', async () => {
    const alice = await newCustomer(t, 0, 'Lister');
    const first = await t.funding.deposits.request({ userId: alice.userId, amount: 2_500, note: 'wire 1' });
    const second = await t.funding.deposits.request({ userId: alice.userId, amount: 700 });
    await t.funding.deposits.reject(second.id, 'admin-cli', 'duplicate');
    const listed = await admin('deposits', 'list', '--user', alice.userId);
    assert.equal(listed.code, 0);
    const lines = listed.out.split('\n');
    assert.match(
      lines[0]!,
      new RegExp(`^#${second.id}  rejected  \\$7\\.00  user ${alice.userId} \\(Lister\\)  asked .*  by admin-cli .*: duplicate$`),
    );
    assert.match(lines[1]!, new RegExp(`^#${first.id}  pending  \\$25\\.00  .*note: wire 1$`));
    const pending = (await admin('deposits', 'list', '--status', 'pending', '--user', alice.userId, '--json')).json();
    assert.equal(pending.ok, true);
    assert.deepEqual(
      pending.requests.map((r: { id: number; amount: string; status: string }) => [r.id, r.amount, r.status]),
      [[first.id, '25.00', 'pending']],
    );
    const bad = await admin('deposits', 'list', '--status', 'maybe', '--json');
    assert.equal(bad.code, 1);
    assert.equal(bad.json().error, '--status must be pending, approved or rejected');
  });

  test('invoices list shows each invoice with its charges, what is owed back, filtered by status, in text and JSON', async () => {
    const carol = await newCustomer(t, 0, 'Payer');
    const open = await t.funding.payments.openInvoice({ userId: carol.userId, chatId: 5101, amount: 2_000 });
    t.clock.advance(1_000);
    const paid = await t.funding.payments.openInvoice({ userId: carol.userId, chatId: 5101, amount: 5_000 });
    const charge = (id: string) => ({
      invoiceId: paid.id,
      telegramChargeId: id,
      providerChargeId: `prov-${id}`,
      amount: 5_000,
      currency: 'USD',
    });
    await t.funding.payments.credit(charge('tg-1'));
    await t.funding.payments.credit(charge('tg-2'));
    const listed = await admin('invoices', 'list', '--user', carol.userId);
    assert.equal(listed.code, 0, listed.err);
    const lines = listed.out.split('\n');
    assert.match(lines[0]!, new RegExp(`^${paid.id}  credited  \\$50\\.00  user ${carol.userId}  chat 5101  opened `));
    assert.match(lines[1]!, /^ {2}credited {2}50\.00 USD {2}telegram tg-1 {2}provider prov-tg-1 /);
    assert.match(lines[2]!, /^ {2}OWED BACK {2}50\.00 USD {2}telegram tg-2 {2}provider prov-tg-2 /);
    assert.match(lines[3]!, new RegExp(`^${open.id}  open  \\$20\\.00 `));
    assert.match(listed.err, /1 payment\(s\) credited nothing and are owed back/);
    const credited = (await admin('invoices', 'list', '--status', 'credited', '--user', carol.userId, '--json')).json();
    assert.deepEqual(
      credited.invoices.map((i: { id: string; amount: string; owedBack: number }) => [i.id, i.amount, i.owedBack]),
      [[paid.id, '50.00', 1]],
    );
    const bad = await admin('invoices', 'list', '--status', 'lost', '--json');
    assert.equal(bad.code, 1);
    assert.equal(bad.json().error, '--status must be open, paid or credited');
  });

  test('deposits approve credits the wallet once; a second approval is refused with the reason', async () => {
    const bob = await newCustomer(t, 1_000, 'Approvee');
    const { id } = await t.funding.deposits.request({ userId: bob.userId, amount: 5_000 });
    const approved = await admin('deposits', 'approve', '--id', String(id));
    assert.equal(approved.code, 0, approved.err);
    assert.equal(approved.out, `Deposit request #${id} approved: $50.00 credited. Wallet balance: $60.00.`);
    assert.equal((await t.core.walletBalance(bob.caller)).balance, 6_000);
    assert.equal((await t.funding.deposits.get(id)).decidedBy, 'admin-cli');
    const again = await admin('deposits', 'approve', '--id', String(id), '--json');
    assert.equal(again.code, 1);
    assert.deepEqual(again.json(), { ok: false, error: `Deposit request #${id} is already approved` });
    assert.equal((await t.core.walletBalance(bob.caller)).balance, 6_000);
    assert.equal((await admin('ledger', 'check', '--json')).json().consistent, true);
  });

  test('deposits reject needs a reason and records it; unknown ids and bad ids are refused', async () => {
    const carol = await newCustomer(t, 0, 'Rejectee');
    const { id } = await t.funding.deposits.request({ userId: carol.userId, amount: 5_000 });
    const noReason = await admin('deposits', 'reject', '--id', String(id));
    assert.equal(noReason.code, 2);
    assert.match(noReason.err, /required option '--reason <TEXT>' not specified/);
    const rejected = await admin('deposits', 'reject', '--id', String(id), '--reason', 'Payment not received', '--json');
    assert.equal(rejected.code, 0);
    assert.equal(rejected.json().request.status, 'rejected');
    assert.equal(rejected.json().request.reason, 'Payment not received');
    assert.equal((await t.core.walletBalance(carol.caller)).balance, 0);
    assert.equal((await admin('deposits', 'approve', '--id', '999999')).err, 'Refused: No deposit request #999999');
    assert.equal((await admin('deposits', 'approve', '--id', 'abc')).err, 'Refused: --id must be a whole number');
  });
});
