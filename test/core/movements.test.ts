import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CardServiceError } from '../../src/core/rules/errors.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';
import { assertRefused } from './refusals.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

for (const dialect of dialects()) {
  describe(`top-up (spec 4.6, ${dialect})`, () => {
    test('a top-up moves the amount onto the card and charges amount plus platform fee to the wallet', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const result = await t.core.topup(alice.caller, card.id, { amount: 2_000 });
      // Online: 2.5 % of 20.00 = 0.50, plus 0.30 fixed.
      assert.equal(result.platformFee, 80);
      assert.equal(result.totalCharged, 2_080);
      assert.equal(result.newCardBalance, 2_000);
      assert.equal(result.walletBalance, 100_000 - 500 - 2_080);
      assert.equal(result.cardId, card.id);
      assert.ok(result.invoiceId > 0);
      const after = await t.core.getCard(alice.caller, card.id);
      assert.equal(after.balance, 2_000);
      assert.equal(after.deposit, 2_000);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, result.walletBalance);
    });

    test('the platform fee depends on the card category (Wallet: 3 % + 0.50)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice, 'Phone', 'Wallet');
      assert.equal(card.category, 'Wallet');
      const result = await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      assert.equal(result.platformFee, 30 + 50);
    });

    test('the platform fee percentage is rounded half-up to the cent', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const online = await newCard(t, alice, 'Online');
      const wallet = await newCard(t, alice, 'Wallet', 'Wallet');
      // 2.5 % of 10.20 = 0.255 → 0.26; 2.5 % of 10.10 = 0.2525 → 0.25.
      assert.equal((await t.core.quoteTopup(alice.caller, online.id, { amount: 1_020 })).platformFee, 26 + 30);
      assert.equal((await t.core.quoteTopup(alice.caller, online.id, { amount: 1_010 })).platformFee, 25 + 30);
      // 3 % of 10.50 = 0.315 → 0.32; 3 % of 10.15 = 0.3045 → 0.30.
      assert.equal((await t.core.quoteTopup(alice.caller, wallet.id, { amount: 1_050 })).platformFee, 32 + 50);
      assert.equal((await t.core.quoteTopup(alice.caller, wallet.id, { amount: 1_015 })).platformFee, 30 + 50);
      const done = await t.core.topup(alice.caller, online.id, { amount: 1_020 });
      assert.equal(done.platformFee, 56);
      assert.equal(done.totalCharged, 1_076);
    });

    test('a top-up whose amount plus the current deposit exceeds the plan limit is refused (card limit exceeded)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 2_000_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 60_000 });
      t.clock.advance(2 * MINUTE);
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 40_001 }),
        'CARD_LIMIT_EXCEEDED',
        'Topup would exceed card limit. Current deposit: 600.00, Limit: 1000.00, Available: 400.00',
      );
      t.clock.advance(2 * MINUTE);
      const exact = await t.core.topup(alice.caller, card.id, { amount: 40_000 });
      assert.equal(exact.newCardBalance, 100_000);
    });

    test('the plan limit caps the deposit, not the balance: spending does not free the limit', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 2_000_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 100_000 });
      await t.admin.simulatePurchase(card.id, 90_000);
      t.clock.advance(2 * MINUTE);
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'CARD_LIMIT_EXCEEDED',
        'Topup would exceed card limit. Current deposit: 1000.00, Limit: 1000.00, Available: 0.00',
      );
    });

    test('a top-up is refused when the wallet holds less than amount plus platform fee', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 2_000);
      const card = await newCard(t, alice); // the 5.00 creation fee leaves 15.00
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 1_500 }),
        'INSUFFICIENT_WALLET_BALANCE',
        'Insufficient wallet balance. Required: 15.68 (topup: 15.00 + platform fee: 0.68), Available: 15.00',
      );
    });

    test('a refused top-up changes no balance: the wallet is charged only if the card top-up succeeds', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 2_000);
      const card = await newCard(t, alice);
      await assert.rejects(t.core.topup(alice.caller, card.id, { amount: 1_500 }));
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 1_500);
      const after = await t.core.getCard(alice.caller, card.id);
      assert.equal(after.balance, 0);
      assert.equal(after.deposit, 0);
      const statement = await t.core.listTransactions(alice.caller, {});
      assert.equal(statement.pagination.total, 0);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
    });

    test('a second top-up within 2 minutes is refused with the seconds left; at 120 s it is allowed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 500 });
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'TOPUP_COOLDOWN',
        'Please wait 120 seconds before topping up this card again',
      );
      t.clock.advance(60 * SECOND);
      const refused = await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'TOPUP_COOLDOWN',
        'Please wait 60 seconds before topping up this card again',
      );
      assert.equal(refused.retryAfterSeconds, 60);
      t.clock.advance(59 * SECOND);
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'TOPUP_COOLDOWN',
        'Please wait 1 seconds before topping up this card again',
      );
      t.clock.advance(1 * SECOND);
      const allowed = await t.core.topup(alice.caller, card.id, { amount: 500 });
      assert.equal(allowed.newCardBalance, 1_000);
    });

    test('the top-up cooldown is per card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const first = await newCard(t, alice, 'First');
      const second = await newCard(t, alice, 'Second');
      await t.core.topup(alice.caller, first.id, { amount: 500 });
      const other = await t.core.topup(alice.caller, second.id, { amount: 500 });
      assert.equal(other.newCardBalance, 500);
    });

    test('a top-up refused by the card limit still starts the cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 2_000_000);
      const card = await newCard(t, alice);
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 1_000_000 }),
        'CARD_LIMIT_EXCEEDED',
        'Topup would exceed card limit. Current deposit: 0.00, Limit: 1000.00, Available: 1000.00',
      );
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'TOPUP_COOLDOWN',
        'Please wait 120 seconds before topping up this card again',
      );
    });

    test('a top-up refused by the wallet balance still starts the cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const card = await newCard(t, alice);
      await assert.rejects(t.core.topup(alice.caller, card.id, { amount: 1_000 }), { code: 'INSUFFICIENT_WALLET_BALANCE' });
      t.clock.advance(30 * SECOND);
      await assertRefused(
        t.core.topup(alice.caller, card.id, { amount: 500 }),
        'TOPUP_COOLDOWN',
        'Please wait 90 seconds before topping up this card again',
      );
    });

    test('a top-up whose commit hook fails is rolled back whole, its attempt too', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const before = await t.core.walletBalance(alice.caller);
      const failing = {
        commit: async () => {
          throw new CardServiceError('CARD_CLOSED');
        },
      };
      await assertRefused(t.core.topup(alice.caller, card.id, { amount: 1_000 }, failing), 'CARD_CLOSED', 'Card is closed');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, before.balance);
      assert.equal((await t.core.topup(alice.caller, card.id, { amount: 1_000 })).newCardBalance, 1_000);
    });

    test('a quote does not start the cooldown and changes nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const quote = await t.core.quoteTopup(alice.caller, card.id, { amount: 10_000 });
      assert.deepEqual(quote, {
        cardId: card.id,
        category: 'Online',
        amount: 10_000,
        platformFee: 280,
        totalCharged: 10_280,
        walletBalance: 99_500,
        depositAvailable: 100_000,
        maxAmount: quote.maxAmount,
        cooldownSeconds: 0,
      });
      const done = await t.core.topup(alice.caller, card.id, { amount: 10_000 });
      assert.equal(done.totalCharged, quote.totalCharged);
      assert.equal(done.walletBalance, 99_500 - 10_280);
    });

    test('a quote tells the largest top-up the wallet and the limit allow, and the cooldown left', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      const card = await newCard(t, alice);
      const { maxAmount, walletBalance } = await t.core.quoteTopup(alice.caller, card.id, { amount: 500 });
      const at = async (amount: number) => (await t.core.quoteTopup(alice.caller, card.id, { amount })).totalCharged;
      assert.ok((await at(maxAmount)) <= walletBalance && (await at(maxAmount + 1)) > walletBalance, String(maxAmount));
      await t.core.topup(alice.caller, card.id, { amount: maxAmount });
      t.clock.advance(20_000);
      const after = await t.core.quoteTopup(alice.caller, card.id, { amount: 500 });
      assert.equal(after.cooldownSeconds, 100);
      assert.ok(after.maxAmount < 500, 'nothing more fits in the wallet');
    });

    test('a withdrawal quote tells the card balance and the cooldown left', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 3_000 });
      assert.deepEqual(await t.core.quoteWithdrawal(alice.caller, card.id), {
        cardId: card.id,
        cardBalance: 3_000,
        maxAmount: 3_000,
        cooldownSeconds: 0,
      });
      await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      t.clock.advance(60_000);
      assert.equal((await t.core.quoteWithdrawal(alice.caller, card.id)).cooldownSeconds, 840);
    });

    test('a top-up of a closed card is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.close(alice.caller, card.id);
      await assertRefused(t.core.topup(alice.caller, card.id, { amount: 500 }), 'CARD_CLOSED', 'Card is closed');
    });

    test('a top-up is recorded as an approved credit on the card statement', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const result = await t.core.topup(alice.caller, card.id, { amount: 1_234 });
      const [line] = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
      assert.equal(line?.id, result.transactionId);
      assert.equal(line?.status, 'Approved');
      assert.equal(line?.side, 'Credit');
      assert.equal(line?.type, 'topup');
      assert.equal(line?.amount, 1_234);
    });
  });

  describe(`withdrawal (spec 4.7, ${dialect})`, () => {
    test('a withdrawal moves the amount from the card to the wallet', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      const result = await t.core.withdraw(alice.caller, card.id, { amount: 1_250 });
      assert.equal(result.amountWithdrawn, 1_250);
      assert.equal(result.newCardBalance, 3_750);
      assert.equal(result.walletBalance, topup.walletBalance + 1_250);
      assert.equal(result.cardId, card.id);
      const [line] = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
      assert.equal(line?.id, result.transactionId);
      assert.equal(line?.side, 'Debit');
      assert.equal(line?.type, 'withdrawal');
    });

    test('the whole card balance can be withdrawn, not a cent more', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 2_000 });
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 2_001 }),
        'INSUFFICIENT_CARD_BALANCE',
        'Insufficient card balance. Available: 20.00, Requested: 20.01',
      );
      t.clock.advance(15 * MINUTE);
      const all = await t.core.withdraw(alice.caller, card.id, { amount: 2_000 });
      assert.equal(all.newCardBalance, 0);
    });

    test('a second withdrawal within 15 minutes is refused; at 15 minutes it is allowed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      await t.core.withdraw(alice.caller, card.id, { amount: 100 });
      t.clock.advance(15 * MINUTE - SECOND);
      const refused = await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 100 }),
        'WITHDRAW_COOLDOWN',
        'Please wait 15 minutes between withdrawals',
      );
      assert.equal(refused.retryAfterSeconds, 1);
      t.clock.advance(SECOND);
      const allowed = await t.core.withdraw(alice.caller, card.id, { amount: 100 });
      assert.equal(allowed.newCardBalance, 4_800);
    });

    test('a withdrawal refused for want of card balance still starts the cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 100 }), { code: 'INSUFFICIENT_CARD_BALANCE' });
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 100 }),
        'WITHDRAW_COOLDOWN',
        'Please wait 15 minutes between withdrawals',
      );
    });

    test('a closure within 15 minutes of a withdrawal is refused; at 15 minutes it closes', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      t.clock.advance(15 * MINUTE - SECOND);
      const refused = await assertRefused(
        t.core.close(alice.caller, card.id),
        'WITHDRAW_COOLDOWN',
        'Please wait 15 minutes between withdrawals',
      );
      assert.equal(refused.retryAfterSeconds, 1);
      t.clock.advance(SECOND);
      assert.equal((await t.core.close(alice.caller, card.id)).balanceWithdrawn, 4_000);
    });

    test('a frozen card can still be topped up and withdrawn from (freezing stops purchases only)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.freeze(alice.caller, card.id);
      assert.equal((await t.core.topup(alice.caller, card.id, { amount: 2_000 })).newCardBalance, 2_000);
      assert.equal((await t.core.withdraw(alice.caller, card.id, { amount: 500 })).newCardBalance, 1_500);
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'frozen');
    });

    test('withdrawal and closure share the 15-minute cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      await assertRefused(t.core.close(alice.caller, card.id), 'WITHDRAW_COOLDOWN', 'Please wait 15 minutes between withdrawals');
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'active');
      t.clock.advance(15 * MINUTE);
      const closed = await t.core.close(alice.caller, card.id);
      assert.equal(closed.balanceWithdrawn, 4_000);
    });

    test('a withdrawal from a card that is not ready (temporary provider id) is refused', async (ctx) => {
      const t = await useCore(ctx, dialect, { asyncIssue: true });
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      assert.equal(card.providerReady, false);
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 100 }),
        'CARD_NOT_READY_WITHDRAW',
        'Card is not ready for withdrawals',
      );
    });

    test('a withdrawal the provider fails changes no balance', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      t.sandbox.failNext('withdraw', 'provider offline');
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'PROVIDER_FAILED',
        'Failed to withdraw from card: provider offline',
      );
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 5_000);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, topup.walletBalance);
    });

    test('a withdrawal the provider fails still starts the cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      t.sandbox.failNext('withdraw', 'provider offline');
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_000 }), { code: 'PROVIDER_FAILED' });
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'WITHDRAW_COOLDOWN',
        'Please wait 15 minutes between withdrawals',
      );
    });

    test('a withdrawal from a closed card is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.close(alice.caller, card.id);
      t.clock.advance(15 * MINUTE);
      await assertRefused(t.core.withdraw(alice.caller, card.id, { amount: 100 }), 'CARD_CLOSED', 'Card is closed');
    });
  });
}
