import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CardProvider } from '../../src/core/provider/provider.js';
import { luhnCheckDigit } from '../../src/core/provider/luhn.js';
import { catalogue, newCard, newCustomer, TEST_CARD_DATA_KEY, type Customer } from '../helpers/core.js';
import type { TestCore } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';
import { assertRefused } from './refusals.js';

const MINUTE = 60_000;

function isLuhnValid(pan: string): boolean {
  return luhnCheckDigit(pan.slice(0, -1)) === Number(pan.at(-1));
}

async function createWith(t: TestCore, customer: Customer, extra: { coupon_id?: string; binId?: string; planId?: number } = {}) {
  const { bin, plan } = await catalogue(t);
  return t.core.createCard(customer.caller, {
    bin_id: extra.binId ?? bin.id,
    planId: extra.planId ?? plan.id,
    name: 'Ads',
    ...(extra.coupon_id ? { coupon_id: extra.coupon_id } : {}),
  });
}

for (const dialect of dialects()) {
  describe(`card creation (spec 3, 4.4, ${dialect})`, () => {
    test('a created card is active and the plan creation fee is deducted from the wallet', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { bin, plan } = await catalogue(t);
      const card = await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Ads' });
      assert.equal(card.status, 'active');
      assert.equal(card.name, 'Ads');
      assert.equal(card.binId, bin.id);
      assert.equal(card.planId, plan.id);
      assert.equal(card.limit, plan.limit);
      assert.equal(card.balance, 0);
      assert.equal(card.deposit, 0);
      assert.equal(card.category, 'Online');
      assert.equal(card.currency, 'USD');
      assert.equal(card.providerReady, true);
      assert.match(card.maskedPan, /\d{4}$/);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000 - plan.creationFee);
    });

    test('a card on a BIN with digital-wallet support has the Wallet category', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const card = await newCard(t, alice, 'Phone', 'Wallet');
      assert.equal(card.category, 'Wallet');
    });

    test("the BIN's initial balance is deposited to the card from the platform, not the wallet", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { bins, plan } = await catalogue(t);
      const promo = bins.find((b) => b.initialBalance === 500);
      assert.ok(promo);
      const card = await t.core.createCard(alice.caller, { bin_id: promo.id, planId: plan.id, name: 'Promo' });
      assert.equal(card.balance, 500);
      assert.equal(card.deposit, 500);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000 - plan.creationFee);
      const [line] = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
      assert.equal(line?.type, 'initial_balance');
      assert.equal(line?.side, 'Credit');
      assert.equal(line?.amount, 500);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test("a BIN whose initial balance is above the plan's limit is refused before the provider issues anything", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { plan } = await catalogue(t);
      const rich = await t.admin.addBin({
        bin: '400000',
        network: 'visa',
        threeDS: true,
        wallet: false,
        currency: 'USD',
        country: 'US',
        initialBalance: plan.limit + 1,
      });
      const message = 'Initial balance of this BIN exceeds the plan limit. Initial balance: 1000.01, Limit: 1000.00';
      await assertRefused(
        t.core.quoteCreateCard(alice.caller, { bin_id: rich.id, planId: plan.id, name: 'Ads' }),
        'INITIAL_BALANCE_OVER_LIMIT',
        message,
      );
      await assertRefused(createWith(t, alice, { binId: rich.id }), 'INITIAL_BALANCE_OVER_LIMIT', message);
      assert.deepEqual(
        t.sandbox.calls.filter((c) => c.operation === 'issue'),
        [],
      );
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000);
      assert.deepEqual(await t.core.listCards(alice.caller), []);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test("a BIN whose initial balance equals the plan's limit creates a card filled to its limit", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { plan } = await catalogue(t);
      const full = await t.admin.addBin({
        bin: '400001',
        network: 'visa',
        threeDS: true,
        wallet: false,
        currency: 'USD',
        country: 'US',
        initialBalance: plan.limit,
      });
      const card = await createWith(t, alice, { binId: full.id });
      assert.equal(card.deposit, plan.limit);
    });

    test('creation with too little wallet money is refused with the required amount, and changes nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 499);
      await assertRefused(createWith(t, alice), 'INSUFFICIENT_BALANCE', 'Insufficient balance. Required: 5.00');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 499);
      assert.deepEqual(await t.core.listCards(alice.caller), []);
    });

    test('creation with an unknown BIN is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await assertRefused(
        createWith(t, alice, { binId: '00000000-0000-4000-8000-000000000000' }),
        'INVALID_BIN',
        'Invalid BIN ID or BIN is disabled',
      );
    });

    test('creation with a disabled BIN is refused, and a disabled BIN is not listed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { bin } = await catalogue(t);
      await t.admin.setBinEnabled(bin.id, false);
      assert.ok(!(await t.core.listBins()).some((b) => b.id === bin.id));
      await assertRefused(createWith(t, alice, { binId: bin.id }), 'INVALID_BIN', 'Invalid BIN ID or BIN is disabled');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000);
    });

    test('creation with an inactive plan is refused, and an inactive plan is not listed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { plan } = await catalogue(t);
      await t.admin.deactivatePlan(plan.id);
      assert.ok(!(await t.core.listPlans()).some((p) => p.id === plan.id));
      await assertRefused(createWith(t, alice, { planId: plan.id }), 'INVALID_PLAN', 'Invalid plan ID or plan is inactive');
      await assertRefused(createWith(t, alice, { planId: 999_999 }), 'INVALID_PLAN', 'Invalid plan ID or plan is inactive');
    });

    test('the BIN list holds enabled BINs and the plan list active plans, cheapest first', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const bins = await t.core.listBins();
      assert.ok(bins.length >= 4);
      assert.ok(bins.every((b) => b.enabled && /^\d{6}$/.test(b.bin)));
      assert.ok(bins.some((b) => b.wallet) && bins.some((b) => !b.wallet));
      const plans = await t.core.listPlans();
      assert.ok(plans.length >= 2);
      for (let i = 1; i < plans.length; i++) {
        assert.ok(plans[i]!.limit > plans[i - 1]!.limit);
        assert.ok(plans[i]!.creationFee > plans[i - 1]!.creationFee);
      }
    });

    test('a percent coupon takes its share off the creation fee', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'HALF', kind: 'percent', value: 5_000 });
      await createWith(t, alice, { coupon_id: 'HALF' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000 - 250);
      assert.equal((await t.admin.listCoupons())[0]?.redemptions, 1);
    });

    test('an amount coupon takes its amount off the creation fee, never below zero', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'TWO', kind: 'amount', value: 200 });
      await t.admin.createCoupon({ code: 'FREE', kind: 'amount', value: 10_000 });
      await createWith(t, alice, { coupon_id: 'TWO' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000 - 300);
      await createWith(t, alice, { coupon_id: 'FREE' });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000 - 300);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('a creation quote shows the fee after the coupon and the wallet after it, and redeems nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const { bin, plan } = await catalogue(t);
      await t.admin.createCoupon({ code: 'HALF', kind: 'percent', value: 5_000, maxRedemptions: 1 });
      const input = { bin_id: bin.id, planId: plan.id, name: 'Ads', coupon_id: 'HALF' };
      const quote = await t.core.quoteCreateCard(alice.caller, input);
      assert.deepEqual(quote, {
        planFee: 500,
        fee: 250,
        walletBalance: 10_000,
        walletAfter: 9_750,
        initialBalance: Number(bin.initialBalance),
      });
      assert.equal((await t.admin.listCoupons())[0]?.redemptions, 0);
      await t.core.createCard(alice.caller, input);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, quote.walletAfter);
      await assertRefused(t.core.quoteCreateCard(alice.caller, input), 'INVALID_COUPON', 'Invalid coupon: coupon has no redemptions left');
      await assertRefused(
        t.core.quoteCreateCard(alice.caller, { ...input, coupon_id: 'NOPE' }),
        'INVALID_COUPON',
        'Invalid coupon: coupon not found',
      );
      await assertRefused(
        t.core.quoteCreateCard(alice.caller, { ...input, bin_id: '00000000-0000-4000-8000-000000000000' }),
        'INVALID_BIN',
        'Invalid BIN ID or BIN is disabled',
      );
      await assertRefused(
        t.core.quoteCreateCard(alice.caller, { ...input, planId: 999 }),
        'INVALID_PLAN',
        'Invalid plan ID or plan is inactive',
      );
    });

    test('an expired coupon is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'OLD', kind: 'amount', value: 100, expiresAt: '2026-03-01T11:00:00.000Z' });
      await assertRefused(createWith(t, alice, { coupon_id: 'OLD' }), 'INVALID_COUPON', 'Invalid coupon: coupon has expired');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000);
    });

    test('an inactive coupon is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'OFF', kind: 'amount', value: 100 });
      await t.admin.setCouponActive('OFF', false);
      await assertRefused(createWith(t, alice, { coupon_id: 'OFF' }), 'INVALID_COUPON', 'Invalid coupon: coupon is inactive');
    });

    test('an unknown coupon is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await assertRefused(createWith(t, alice, { coupon_id: 'NOPE' }), 'INVALID_COUPON', 'Invalid coupon: coupon not found');
    });

    test('a coupon with no redemptions left is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      await createWith(t, alice, { coupon_id: 'ONCE' });
      await assertRefused(createWith(t, alice, { coupon_id: 'ONCE' }), 'INVALID_COUPON', 'Invalid coupon: coupon has no redemptions left');
    });

    test('a creation refused for want of money does not use up the coupon', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const poor = await newCustomer(t, 100, 'Poor');
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      await assertRefused(createWith(t, poor, { coupon_id: 'ONCE' }), 'INSUFFICIENT_BALANCE', 'Insufficient balance. Required: 4.00');
      assert.equal((await t.admin.listCoupons())[0]?.redemptions, 0);
    });
  });

  describe(`card details (spec 4.5, 4.10, ${dialect})`, () => {
    test('sensitive details hold a Luhn-valid 16-digit PAN under the BIN, a CVV and an expiry three years out', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const { bin } = await catalogue(t);
      const card = await newCard(t, alice);
      const details = await t.core.getSensitiveDetails(alice.caller, card.id);
      assert.match(details.pan, /^\d{16}$/);
      assert.ok(details.pan.startsWith(bin.bin));
      assert.ok(isLuhnValid(details.pan));
      assert.match(details.cvv, /^\d{3,4}$/);
      assert.equal(details.exp, '03/29');
      assert.equal(details.maskedPan, card.maskedPan);
      assert.ok(details.maskedPan.endsWith(details.pan.slice(-4)));
      assert.ok(!details.maskedPan.includes(details.pan.slice(6, 12)));
      assert.equal(details.name, 'Ads');
    });

    test('the card number and CVV are stored encrypted, never in clear', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const details = await t.core.getSensitiveDetails(alice.caller, card.id);
      const row = await t.database.db.selectFrom('cards').selectAll().where('id', '=', card.id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(details.pan));
      assert.notEqual(row.cvv_encrypted, details.cvv);
    });

    test('encrypted card data is bound to its card and field: copied to another card it does not decrypt', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const first = await newCard(t, alice, 'First');
      const second = await newCard(t, alice, 'Second');
      const rowOf = (id: string) =>
        t.database.db.selectFrom('cards').select(['pan_encrypted', 'cvv_encrypted']).where('id', '=', id).executeTakeFirstOrThrow();
      const stolen = await rowOf(first.id);
      await t.database.db.updateTable('cards').set({ pan_encrypted: stolen.pan_encrypted }).where('id', '=', second.id).execute();
      await assert.rejects(t.core.getSensitiveDetails(alice.caller, second.id), /Unsupported state or unable to authenticate data/);
      await t.database.db.updateTable('cards').set({ pan_encrypted: stolen.cvv_encrypted }).where('id', '=', first.id).execute();
      await assert.rejects(t.core.getSensitiveDetails(alice.caller, first.id), /Unsupported state or unable to authenticate data/);
    });

    test('card data sealed before it was bound to its card (v1) still reads', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const { createCipheriv, randomBytes } = await import('node:crypto');
      const v1 = (plain: string) => {
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', TEST_CARD_DATA_KEY, iv);
        const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
        return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
      };
      await t.database.db
        .updateTable('cards')
        .set({ pan_encrypted: v1('4242424242424242'), cvv_encrypted: v1('123') })
        .where('id', '=', card.id)
        .execute();
      const details = await t.core.getSensitiveDetails(alice.caller, card.id);
      assert.equal(details.pan, '4242424242424242');
      assert.equal(details.cvv, '123');
    });

    test('a card reads back with its balance, deposit and billing address', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 700 });
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.balance, 700);
      assert.equal(read.deposit, 700);
      assert.equal(read.address.country, 'US');
      assert.deepEqual(
        (await t.core.listCards(alice.caller)).map((c) => c.id),
        [card.id],
      );
    });
  });

  describe(`card states (spec 3, 4.8, 4.9, 4.11, ${dialect})`, () => {
    test('an active card freezes; its balance is unchanged', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      assert.deepEqual(await t.core.freeze(alice.caller, card.id), { cardId: card.id, status: 'frozen' });
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.status, 'frozen');
      assert.equal(read.balance, 1_000);
    });

    test('freezing a frozen card is refused: already frozen', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      await assertRefused(t.core.freeze(alice.caller, card.id), 'ALREADY_FROZEN', 'Card is already frozen');
    });

    test('freezing a closed card is refused: only active cards can be frozen', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.close(alice.caller, card.id);
      await assertRefused(t.core.freeze(alice.caller, card.id), 'ONLY_ACTIVE_CAN_FREEZE', 'Only active cards can be frozen');
    });

    test('freezing a card that is not ready is refused', async (ctx) => {
      const t = await useCore(ctx, dialect, { asyncIssue: true });
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assertRefused(t.core.freeze(alice.caller, card.id), 'CARD_NOT_READY_FREEZE', 'Card is not ready for freeze operation');
      await t.admin.completeIssuance(card.id);
      assert.equal((await t.core.freeze(alice.caller, card.id)).status, 'frozen');
    });

    test("freeze, unfreeze, withdrawal and closure are applied at the provider, for the card's provider id", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const { provider_card_id: providerCardId } = await t.database.db
        .selectFrom('cards')
        .select('provider_card_id')
        .where('id', '=', card.id)
        .executeTakeFirstOrThrow();
      const from = t.sandbox.calls.length;
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      await t.core.freeze(alice.caller, card.id);
      await t.core.unfreeze(alice.caller, card.id);
      await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      t.clock.advance(15 * MINUTE);
      await t.core.close(alice.caller, card.id);
      assert.deepEqual(t.sandbox.calls.slice(from), [
        { operation: 'freeze', providerCardId, ok: true },
        { operation: 'unfreeze', providerCardId, ok: true },
        { operation: 'withdraw', providerCardId, amount: 1_000, ok: true },
        { operation: 'terminate', providerCardId, ok: true },
      ]);
    });

    test('racing freezes and unfreezes of one card reach the provider one at a time, so the provider ends as the card does', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      // The provider is slow to unfreeze, once: two unfreezes race, and a freeze follows the first.
      const slow = holdFirstCall(t.provider, 'unfreeze');
      const first = t.core.unfreeze(alice.caller, card.id);
      const second = t.core.unfreeze(alice.caller, card.id);
      await new Promise((resolve) => setTimeout(resolve, 100));
      slow.release();
      const outcomes = await Promise.allSettled([first, second]);
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
      const refused = outcomes.find((o) => o.status === 'rejected');
      assert.equal((refused as PromiseRejectedResult).reason.code, 'ONLY_FROZEN_CAN_UNFREEZE');
      assert.equal(slow.calls(), 1, 'the refused unfreeze never reached the provider');
      await t.core.freeze(alice.caller, card.id);

      const lastAtProvider = t.sandbox.calls.filter((c) => c.ok && (c.operation === 'freeze' || c.operation === 'unfreeze')).at(-1);
      assert.equal(lastAtProvider?.operation, 'freeze');
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'frozen');
    });

    test('a freeze waits for another change of the card under way, then checks the card anew', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const slow = holdFirstCall(t.provider, 'freeze');
      // Whichever reaches the provider first is held there; the other waits for it (on Postgres either may
      // get its connection first).
      const both = [t.core.freeze(alice.caller, card.id), t.core.freeze(alice.caller, card.id)];
      await new Promise((resolve) => setTimeout(resolve, 100));
      slow.release();
      const settled = await Promise.allSettled(both);
      const done = settled.filter((s) => s.status === 'fulfilled');
      assert.equal(done.length, 1, 'one freeze is done');
      assert.equal(done[0]!.value.status, 'frozen');
      const refused = both[settled.findIndex((s) => s.status === 'rejected')]!;
      await assertRefused(refused, 'ALREADY_FROZEN', 'Card is already frozen');
      assert.equal(t.sandbox.calls.filter((c) => c.operation === 'freeze').length, 1);
    });

    test('a freeze the provider fails leaves the card active', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      t.sandbox.failNext('freeze', 'busy');
      await assertRefused(t.core.freeze(alice.caller, card.id), 'PROVIDER_FAILED', 'Failed to freeze card: busy');
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'active');
    });

    test('a frozen card unfreezes to active', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      assert.deepEqual(await t.core.unfreeze(alice.caller, card.id), { cardId: card.id, status: 'active' });
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'active');
    });

    test('unfreezing a card that is not frozen is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assertRefused(t.core.unfreeze(alice.caller, card.id), 'ONLY_FROZEN_CAN_UNFREEZE', 'Only frozen cards can be unfrozen');
      await t.core.close(alice.caller, card.id);
      await assertRefused(t.core.unfreeze(alice.caller, card.id), 'ONLY_FROZEN_CAN_UNFREEZE', 'Only frozen cards can be unfrozen');
    });

    test('unfreezing a frozen card that is not ready is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      await t.database.db.updateTable('cards').set({ provider_ready: 0 }).where('id', '=', card.id).execute();
      await assertRefused(t.core.unfreeze(alice.caller, card.id), 'CARD_NOT_READY_UNFREEZE', 'Card is not ready for unfreeze operation');
    });

    test('closing returns the remaining balance to the wallet and is final', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 3_000 });
      const closed = await t.core.close(alice.caller, card.id);
      assert.equal(closed.cardId, card.id);
      assert.equal(closed.balanceWithdrawn, 3_000);
      assert.ok(closed.transactionId);
      assert.ok(closed.invoiceId);
      assert.equal(closed.newWalletBalance, topup.walletBalance + 3_000);
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.status, 'closed');
      assert.equal(read.balance, 0);
      const [line] = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
      assert.equal(line?.id, closed.transactionId);
      assert.equal(line?.amount, 3_000);
    });

    test('closing a card with no balance records no withdrawal transaction', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const card = await newCard(t, alice);
      const closed = await t.core.close(alice.caller, card.id);
      assert.deepEqual(closed, { cardId: card.id, balanceWithdrawn: 0, transactionId: null, invoiceId: null, newWalletBalance: 9_500 });
      assert.equal((await t.core.listTransactions(alice.caller, {})).pagination.total, 0);
    });

    test('a frozen card can be closed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      await t.core.close(alice.caller, card.id);
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'closed');
    });

    test('closing a closed card is refused: already closed (no operation reactivates it)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.close(alice.caller, card.id);
      t.clock.advance(15 * MINUTE);
      await assertRefused(t.core.close(alice.caller, card.id), 'ALREADY_CLOSED', 'Card is already closed');
      await assertRefused(t.core.unfreeze(alice.caller, card.id), 'ONLY_FROZEN_CAN_UNFREEZE', 'Only frozen cards can be unfrozen');
      await assertRefused(t.core.freeze(alice.caller, card.id), 'ONLY_ACTIVE_CAN_FREEZE', 'Only active cards can be frozen');
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'closed');
    });

    test('closing a card that is not ready is refused', async (ctx) => {
      const t = await useCore(ctx, dialect, { asyncIssue: true });
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assertRefused(t.core.close(alice.caller, card.id), 'CARD_NOT_READY_CLOSE', 'Card not ready for closure');
      await t.admin.completeIssuance(card.id);
      assert.equal((await t.core.getCard(alice.caller, card.id)).providerReady, true);
      assert.equal((await t.core.close(alice.caller, card.id)).balanceWithdrawn, 0);
    });

    test('a closure the provider fails is refused with its message and leaves the card and balances as they were', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      t.sandbox.failNext('terminate', 'boom');
      await assertRefused(t.core.close(alice.caller, card.id), 'PROVIDER_FAILED', 'Failed to close card: boom');
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.status, 'active');
      assert.equal(read.balance, 1_000);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, topup.walletBalance);
    });

    test('a closure the provider fails still starts the cooldown it shares with withdrawals', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      t.sandbox.failNext('terminate', 'boom');
      await assert.rejects(t.core.close(alice.caller, card.id), { code: 'PROVIDER_FAILED' });
      await assertRefused(t.core.close(alice.caller, card.id), 'WITHDRAW_COOLDOWN', 'Please wait 15 minutes between withdrawals');
    });
  });

  describe(`ownership (spec 5.2, ${dialect})`, () => {
    test("another user's card reads as not found for every card operation", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000, 'Alice');
      const bob = await newCustomer(t, 100_000, 'Bob');
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      t.clock.advance(15 * MINUTE);
      const text = 'Card not found or access denied';
      const amount = { amount: 500 };
      const attempts: [string, () => Promise<unknown>][] = [
        ['getCard', () => t.core.getCard(bob.caller, card.id)],
        ['getSensitiveDetails', () => t.core.getSensitiveDetails(bob.caller, card.id)],
        ['quoteTopup', () => t.core.quoteTopup(bob.caller, card.id, amount)],
        ['topup', () => t.core.topup(bob.caller, card.id, amount)],
        ['withdraw', () => t.core.withdraw(bob.caller, card.id, amount)],
        ['freeze', () => t.core.freeze(bob.caller, card.id)],
        ['unfreeze', () => t.core.unfreeze(bob.caller, card.id)],
        ['close', () => t.core.close(bob.caller, card.id)],
        ['listOtps', () => t.core.listOtps(bob.caller, card.id)],
        ['listOtps by number', () => t.core.listOtps(bob.caller, String(card.number))],
        ['requestOtp', () => t.core.requestOtp(bob.caller, card.id)],
        ['listTransactions', () => t.core.listTransactions(bob.caller, { card_id: card.id })],
      ];
      for (const [name, attempt] of attempts) {
        await assert.rejects(attempt(), { code: 'CARD_NOT_FOUND', message: text }, name);
      }
      // Bob's attempts neither moved money nor started Alice's cooldowns.
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.status, 'active');
      assert.equal(read.balance, 1_000);
      assert.equal((await t.core.withdraw(alice.caller, card.id, amount)).amountWithdrawn, 500);
      assert.deepEqual(await t.core.listCards(bob.caller), []);
    });

    test('an unknown or malformed card id reads as not found', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      for (const id of ['00000000-0000-4000-8000-000000000000', 'abc', "1' or '1'='1"]) {
        await assertRefused(t.core.getCard(alice.caller, id), 'CARD_NOT_FOUND', 'Card not found or access denied');
        await assertRefused(t.core.topup(alice.caller, id, { amount: 500 }), 'CARD_NOT_FOUND', 'Card not found or access denied');
      }
    });

    test('an empty card id is Card ID is required, from every card operation', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      for (const id of ['', ' ']) {
        for (const operation of [
          () => t.core.getCard(alice.caller, id),
          () => t.core.getSensitiveDetails(alice.caller, id),
          () => t.core.topup(alice.caller, id, { amount: 500 }),
          () => t.core.withdraw(alice.caller, id, { amount: 500 }),
          () => t.core.freeze(alice.caller, id),
          () => t.core.close(alice.caller, id),
          () => t.core.listOtps(alice.caller, id),
          () => t.core.requestOtp(alice.caller, id),
        ]) {
          await assertRefused(operation(), 'CARD_ID_REQUIRED', 'Card ID is required');
        }
      }
    });

    test('the core itself refuses amounts, names and paging outside the spec, whoever calls it', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 2_000 });
      t.clock.advance(16 * MINUTE);
      const before = await t.admin.checkLedger();
      await assertRefused(t.core.topup(alice.caller, card.id, { amount: 499 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.topup(alice.caller, card.id, { amount: 1_000_001 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.topup(alice.caller, card.id, { amount: 500.5 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.quoteTopup(alice.caller, card.id, { amount: -500 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.withdraw(alice.caller, card.id, { amount: 99 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.withdraw(alice.caller, card.id, { amount: -100 }), 'VALIDATION', 'Invalid input data');
      const { bin, plan } = await catalogue(t);
      await assertRefused(
        t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'x'.repeat(256) }),
        'VALIDATION',
        'Invalid input data',
      );
      await assertRefused(t.core.listTransactions(alice.caller, { limit: 0 }), 'VALIDATION', 'Invalid input data');
      await assertRefused(t.core.listTransactions(alice.caller, { page: 1.5 }), 'VALIDATION', 'Invalid input data');
      assert.deepEqual(await t.admin.checkLedger(), before);
      // Refused before the attempt: the cooldowns did not start.
      assert.equal((await t.core.withdraw(alice.caller, card.id, { amount: 100 })).amountWithdrawn, 100);
    });
  });
}

/** Holds the provider's first call of `operation` until `release`; `calls` counts the calls made. */
function holdFirstCall(provider: CardProvider, operation: 'freeze' | 'unfreeze'): { release(): void; calls(): number } {
  const real = provider[operation].bind(provider);
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  provider[operation] = async (providerCardId) => {
    if (++calls === 1) await held;
    return real(providerCardId);
  };
  return { release: () => release(), calls: () => calls };
}
