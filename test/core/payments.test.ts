import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

const charge = (invoiceId: string, telegramChargeId = 'tg-charge-1', amount = 5_000, currency = 'USD') => ({
  invoiceId,
  telegramChargeId,
  providerChargeId: `provider-${telegramChargeId}`,
  amount,
  currency,
});

for (const dialect of dialects()) {
  describe(`Telegram Payments into the wallet (${dialect})`, () => {
    test('an invoice records the intended credit in USD; its amount follows the top-up rules', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const invoice = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      assert.deepEqual(
        { ...invoice, id: undefined },
        { id: undefined, userId: alice.userId, chatId: 1001, amount: 5_000, currency: 'USD' },
      );
      await assert.rejects(
        t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 499 }),
        (e) => isCardServiceError(e) && e.code === 'VALIDATION',
      );
    });

    test('the checkout passes only for the invoice owner, unpaid, for exactly its amount and currency', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const bob = await newCustomer(t, 0, 'Bob');
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      const check = (over: Partial<{ invoiceId: string; userId: string; amount: number; currency: string }> = {}) =>
        t.funding.payments.checkCheckout({ invoiceId: id, userId: alice.userId, amount: 5_000, currency: 'USD', ...over });
      assert.equal(await check(), undefined);
      assert.equal(await check({ invoiceId: '00000000-0000-4000-8000-000000000000' }), 'unknown');
      assert.equal(await check({ userId: bob.userId }), 'not-yours');
      assert.equal(await check({ amount: 5_001 }), 'amount');
      assert.equal(await check({ currency: 'EUR' }), 'currency');
      await t.funding.payments.credit(charge(id));
      assert.equal(await check(), 'paid');
    });

    test('a successful payment credits the wallet once; the same charge again credits nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      const first = await t.funding.payments.credit(charge(id));
      assert.deepEqual(first, {
        outcome: 'credited',
        userId: alice.userId,
        chatId: 1001,
        amount: 5_000,
        walletBalance: 6_000,
      });
      assert.deepEqual(await t.funding.payments.credit(charge(id)), { outcome: 'duplicate' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 6_000);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0);
    });

    test('the same charge reported twice at once credits once', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => t.funding.payments.credit(charge(id))));
      assert.equal(outcomes.filter((o) => o.outcome === 'credited').length, 1);
      assert.equal(outcomes.filter((o) => o.outcome === 'duplicate').length, 4);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 5_000);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('a second charge for a credited invoice credits nothing: it is recorded, owed back', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      await t.funding.payments.credit(charge(id, 'first'));
      const second = await t.funding.payments.credit(charge(id, 'second'));
      assert.deepEqual(second, { outcome: 'paid-twice', userId: alice.userId, chatId: 1001, amount: 5_000 });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 5_000);
      // The same second charge reported again: a repeated update.
      assert.deepEqual(await t.funding.payments.credit(charge(id, 'second')), { outcome: 'duplicate' });
      const [invoice] = await t.funding.payments.listInvoices();
      assert.equal(invoice!.status, 'credited');
      assert.equal(invoice!.owedBack, 1);
      assert.deepEqual(
        invoice!.payments.map((p) => [p.telegramChargeId, p.credited]),
        [
          ['first', true],
          ['second', false],
        ],
      );
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('two charges of one invoice at once: one credits, the other is owed back', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      const outcomes = await Promise.all(['a', 'b', 'c', 'd'].map((c) => t.funding.payments.credit(charge(id, c))));
      assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['credited', 'paid-twice', 'paid-twice', 'paid-twice']);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 5_000);
      assert.equal((await t.funding.payments.listInvoices())[0]!.owedBack, 3);
    });

    test('invoices list: open, paid (charged, nothing credited) and credited, filtered by status and user', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const bob = await newCustomer(t, 0, 'Bob');
      const open = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      t.clock.advance(1_000);
      const credited = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 6_000 });
      t.clock.advance(1_000);
      const paid = await t.funding.payments.openInvoice({ userId: bob.userId, chatId: 1002, amount: 7_000 });
      await t.funding.payments.credit(charge(credited.id, 'ok', 6_000));
      await t.funding.payments.credit(charge(paid.id, 'short', 6_500));
      const all = await t.funding.payments.listInvoices();
      assert.deepEqual(
        all.map((i) => [i.id, i.status, i.owedBack]),
        [
          [paid.id, 'paid', 1],
          [credited.id, 'credited', 0],
          [open.id, 'open', 0],
        ],
      );
      assert.deepEqual(
        (await t.funding.payments.listInvoices({ status: 'open' })).map((i) => i.id),
        [open.id],
      );
      assert.deepEqual(
        (await t.funding.payments.listInvoices({ userId: bob.userId })).map((i) => i.id),
        [paid.id],
      );
    });

    test('a charge for no invoice of ours, or for other money, credits nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.payments.openInvoice({ userId: alice.userId, chatId: 1001, amount: 5_000 });
      assert.deepEqual(await t.funding.payments.credit(charge('no-such-invoice')), { outcome: 'refused', reason: 'unknown' });
      assert.deepEqual(await t.funding.payments.credit(charge(id, 'c1', 4_000)), { outcome: 'refused', reason: 'amount' });
      assert.deepEqual(await t.funding.payments.credit(charge(id, 'c2', 5_000, 'EUR')), { outcome: 'refused', reason: 'currency' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 0);
      assert.equal(
        await t.funding.payments.checkCheckout({ invoiceId: id, userId: alice.userId, amount: 5_000, currency: 'USD' }),
        undefined,
      );
    });
  });
}
