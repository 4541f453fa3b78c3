import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CardTransactionEvent, OtpEvent } from '../../src/core/operations/events.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

for (const dialect of dialects()) {
  describe(`sandbox purchases and refunds (${dialect})`, () => {
    test('an approved purchase debits the card and is listed as an approved debit', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 2_000 });
      const purchase = await t.admin.simulatePurchase(card.id, 1_250, 'Coffee Shop');
      assert.deepEqual(
        { ...purchase, transactionId: undefined },
        { transactionId: undefined, status: 'Approved', declineCode: null, cardBalance: 750 },
      );
      const [line] = (await t.core.listTransactions(alice.caller, {})).data;
      assert.equal(line?.id, purchase.transactionId);
      assert.equal(line?.status, 'Approved');
      assert.equal(line?.side, 'Debit');
      assert.equal(line?.type, 'purchase');
      assert.equal(line?.merchantName, 'Coffee Shop');
      assert.equal(line?.declineCode, null);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 750);
    });

    test('every transaction on a frozen card is declined (card_frozen), balance unchanged', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 2_000 });
      await t.core.freeze(alice.caller, card.id);
      const purchase = await t.admin.simulatePurchase(card.id, 100);
      assert.equal(purchase.status, 'Declined');
      assert.equal(purchase.declineCode, 'card_frozen');
      assert.equal(purchase.cardBalance, 2_000);
      const [line] = (await t.core.listTransactions(alice.caller, {})).data;
      assert.equal(line?.status, 'Declined');
      assert.equal(line?.declineCode, 'card_frozen');
      await t.core.unfreeze(alice.caller, card.id);
      assert.equal((await t.admin.simulatePurchase(card.id, 100)).status, 'Approved');
    });

    test('a purchase on a closed card is declined (card_closed)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.close(alice.caller, card.id);
      const purchase = await t.admin.simulatePurchase(card.id, 100);
      assert.equal(purchase.declineCode, 'card_closed');
    });

    test('a purchase above the card balance is declined (insufficient_funds), balance unchanged', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      const purchase = await t.admin.simulatePurchase(card.id, 1_001);
      assert.equal(purchase.status, 'Declined');
      assert.equal(purchase.declineCode, 'insufficient_funds');
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 1_000);
      assert.equal((await t.admin.simulatePurchase(card.id, 1_000)).cardBalance, 0);
    });

    test('a refund credits the card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const refund = await t.admin.simulateRefund(card.id, 333, 'Store');
      assert.equal(refund.status, 'Approved');
      assert.equal(refund.cardBalance, 333);
      const [line] = (await t.core.listTransactions(alice.caller, {})).data;
      assert.equal(line?.side, 'Credit');
      assert.equal(line?.type, 'refund');
      assert.equal((await t.core.getCard(alice.caller, card.id)).deposit, 0);
    });
  });

  describe(`events outbox (${dialect})`, () => {
    test('an arriving OTP is recorded in the outbox for delivery, until marked delivered', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice, 'Shopping');
      const otp = await t.admin.simulateOtp(card.id, 4_999, 'Airline');
      const pending = await t.core.events.pending();
      assert.equal(pending.length, 1);
      const [event] = pending;
      assert.equal(event?.userId, alice.userId);
      const payload = event?.event as OtpEvent;
      assert.equal(payload.kind, 'otp');
      assert.equal(payload.code, otp.code);
      assert.equal(payload.otpId, otp.otpId);
      assert.equal(payload.cardId, card.id);
      assert.equal(payload.cardName, 'Shopping');
      assert.equal(payload.amount, 4_999);
      assert.equal(payload.merchantName, 'Airline');
      await t.core.events.markDelivered(event!.seq, t.clock.now());
      assert.deepEqual(await t.core.events.pending(), []);
    });

    test('card transactions (approved and declined) are recorded in the outbox in order', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      const approved = await t.admin.simulatePurchase(card.id, 400, 'A');
      const declined = await t.admin.simulatePurchase(card.id, 9_999, 'B');
      const refund = await t.admin.simulateRefund(card.id, 100, 'C');
      const events = (await t.core.events.pending()).map((p) => p.event as CardTransactionEvent);
      assert.deepEqual(
        events.map((e) => [e.kind, e.transactionId, e.status, e.side, e.declineCode, e.cardBalance]),
        [
          ['card_transaction', approved.transactionId, 'Approved', 'Debit', null, 600],
          ['card_transaction', declined.transactionId, 'Declined', 'Debit', 'insufficient_funds', 600],
          ['card_transaction', refund.transactionId, 'Approved', 'Credit', null, 700],
        ],
      );
      assert.ok(!JSON.stringify(events).includes((await t.core.getSensitiveDetails(alice.caller, card.id)).pan));
      const seqs = (await t.core.events.pending(2)).map((p) => p.seq);
      assert.equal(seqs.length, 2);
    });
  });

  describe(`admin and authentication (${dialect})`, () => {
    test('a token authenticates its user; an unknown, missing or revoked token is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      assert.equal((await t.core.authenticate(alice.token)).userId, alice.userId);
      for (const token of [undefined, '', 'nope']) {
        await assert.rejects(t.core.authenticate(token), { code: 'INVALID_TOKEN', message: 'Invalid or missing API token' });
      }
      const second = await t.admin.issueToken(alice.userId);
      await t.admin.revokeToken(alice.token);
      await assert.rejects(t.core.authenticate(alice.token), { code: 'INVALID_TOKEN' });
      assert.equal((await t.core.authenticate(second)).userId, alice.userId);
    });

    test('API tokens are stored as hashes', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const rows = await t.database.db.selectFrom('api_tokens').selectAll().execute();
      assert.ok(rows.length > 0);
      assert.ok(!JSON.stringify(rows).includes(alice.token));
    });

    test('the health check reports healthy with the environment', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const health = await t.core.health();
      assert.equal(health.status, 'healthy');
      assert.equal(health.timestamp, t.clock.now().toISOString());
      assert.equal(typeof health.environment, 'string');
    });

    test('a wallet deposit is a journal; the users list shows wallet balance and card count', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      assert.equal(await t.admin.deposit(alice.userId, 2_500), 3_500);
      await newCard(t, alice);
      const [user] = await t.admin.listUsers();
      assert.equal(user?.walletBalance, 3_000);
      assert.equal(user?.cardCount, 1);
      await assert.rejects(t.admin.deposit(alice.userId, 0), { name: 'AdminError', message: 'A deposit must be a positive amount' });
      await assert.rejects(t.admin.deposit(alice.userId, 1.5), { name: 'AdminError', message: 'A deposit must be a positive amount' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 3_000);
    });

    test('changing the platform fee applies to the next top-up', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.admin.setFee('Online', 100, 0);
      assert.equal((await t.core.quoteTopup(alice.caller, card.id, { amount: 10_000 })).platformFee, 100);
    });

    test('a fresh database is seeded once: seeding again adds nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const bins = (await t.admin.listBins()).length;
      const plans = (await t.admin.listPlans()).length;
      await t.admin.seedDefaults();
      assert.equal((await t.admin.listBins()).length, bins);
      assert.equal((await t.admin.listPlans()).length, plans);
      assert.equal((await t.admin.listFees()).length, 2);
    });

    test('processes seeding an empty catalogue at once add the defaults exactly once', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const bins = (await t.admin.listBins()).length;
      const plans = (await t.admin.listPlans()).length;
      await t.database.db.deleteFrom('bins').execute();
      await t.database.db.deleteFrom('plans').execute();
      await Promise.all(Array.from({ length: 4 }, () => t.admin.seedDefaults()));
      assert.equal((await t.admin.listBins()).length, bins);
      assert.equal((await t.admin.listPlans()).length, plans);
    });

    test('creating a user is all or nothing: a refused deposit leaves no user behind', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const before = (await t.admin.listUsers()).length;
      await assert.rejects(t.admin.createUser({ name: 'Half', deposit: -5 }), /A deposit must be a positive amount/);
      assert.equal((await t.admin.listUsers()).length, before);
    });

    test('the ledger check is clean after every kind of movement', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const bins = await t.core.listBins();
      const plans = await t.core.listPlans();
      const promo = bins.find((b) => b.initialBalance > 0 && b.wallet)!;
      const online = bins.find((b) => b.initialBalance === 0 && !b.wallet)!;
      const card = await t.core.createCard(alice.caller, { bin_id: promo.id, planId: plans[0]!.id, name: 'Promo' });
      await t.admin.createCoupon({ code: 'HALF', kind: 'percent', value: 5_000 });
      const other = await t.core.createCard(alice.caller, { bin_id: online.id, planId: plans[1]!.id, name: 'Other', coupon_id: 'HALF' });
      await t.core.topup(alice.caller, card.id, { amount: 10_000 });
      await t.core.topup(alice.caller, other.id, { amount: 5_000 });
      await t.admin.simulatePurchase(card.id, 1_234);
      await t.admin.simulateRefund(card.id, 234);
      await t.admin.simulatePurchase(card.id, 1_000_000);
      await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      await t.core.close(alice.caller, other.id);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.deepEqual(ledger.unbalancedJournals, []);
      assert.equal(ledger.total, 0);
      // Everything the wallet paid is accounted for: deposit - fees - purchases + refund + initial balance.
      const wallet = (await t.core.walletBalance(alice.caller)).balance;
      const cardBalance = (await t.core.getCard(alice.caller, card.id)).balance;
      // Creation: 5.00 + 15.00 half off; top-ups: Wallet 3 % + 0.50 of 100.00, Online 2.5 % + 0.30 of 50.00.
      const fees = 500 + 750 + 350 + 155;
      assert.equal(wallet + cardBalance, 100_000 + 500 - fees - 1_234 + 234);
    });
  });
}
