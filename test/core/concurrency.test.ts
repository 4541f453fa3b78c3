import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { catalogue, newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

/** Settles every attempt; returns the successes and the refusal codes (anything else fails the test). */
async function settle<T>(attempts: Promise<T>[]): Promise<{ ok: T[]; refused: string[] }> {
  const results = await Promise.allSettled(attempts);
  const ok: T[] = [];
  const refused: string[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') ok.push(result.value);
    else if (isCardServiceError(result.reason)) refused.push(result.reason.code);
    else throw result.reason;
  }
  return { ok, refused };
}

for (const dialect of dialects()) {
  describe(`concurrency (${dialect})`, () => {
    test('50 simultaneous top-ups on one card: exactly one succeeds, the others hit the cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000_000);
      const card = await newCard(t, alice);
      const { ok, refused } = await settle(Array.from({ length: 50 }, () => t.core.topup(alice.caller, card.id, { amount: 1_000 })));
      assert.equal(ok.length, 1);
      assert.deepEqual(new Set(refused), new Set(['TOPUP_COOLDOWN']));
      assert.equal(refused.length, 49);
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.balance, 1_000);
      assert.equal(read.deposit, 1_000);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test("20 simultaneous spends of a wallet's last $10 (creations and top-ups): exactly one succeeds", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { bin, plan } = await catalogue(t);
      const alice = await newCustomer(t, 10 * plan.creationFee + 1_000);
      const cards = [];
      for (let i = 0; i < 10; i++) cards.push(await newCard(t, alice, `Card ${i}`));
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 1_000);
      const tenDollarPlan = await t.admin.addPlan({ name: 'Ten', description: 'costs 10.00', limit: 100_000, creationFee: 1_000 });
      // A top-up of 9.45 costs 9.45 + 0.54 = 9.99; a card on the plan costs 10.00: only one fits in 10.00.
      const attempts: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i++) {
        attempts.push(t.core.topup(alice.caller, cards[i]!.id, { amount: 945 }));
        attempts.push(t.core.createCard(alice.caller, { bin_id: bin.id, planId: tenDollarPlan.id, name: `New ${i}` }));
      }
      const { ok, refused } = await settle(attempts);
      assert.equal(ok.length, 1);
      assert.equal(refused.length, 19);
      assert.ok(
        refused.every((code) => code === 'INSUFFICIENT_BALANCE' || code === 'INSUFFICIENT_WALLET_BALANCE'),
        refused.join(),
      );
      const wallet = (await t.core.walletBalance(alice.caller)).balance;
      assert.ok(wallet === 0 || wallet === 1, `wallet ${wallet}`);
      assert.equal((await t.core.listCards(alice.caller)).length, wallet === 0 ? 11 : 10);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0);
    });

    test('simultaneous withdrawals and a closure of one card: one passes the shared cooldown', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 10_000 });
      const attempts: Promise<unknown>[] = Array.from({ length: 10 }, () => t.core.withdraw(alice.caller, card.id, { amount: 1_000 }));
      attempts.push(t.core.close(alice.caller, card.id));
      const { ok, refused } = await settle(attempts);
      assert.equal(ok.length, 1);
      assert.deepEqual(new Set(refused), new Set(['WITHDRAW_COOLDOWN']));
      const read = await t.core.getCard(alice.caller, card.id);
      assert.ok(read.balance === 9_000 || (read.balance === 0 && read.status === 'closed'));
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('simultaneous closures of one card: one closes it, the others read Card is already closed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 10_000 });
      const { ok, refused } = await settle(Array.from({ length: 5 }, () => t.core.close(alice.caller, card.id)));
      assert.equal(ok.length, 1);
      assert.deepEqual(refused, Array(4).fill('ALREADY_CLOSED'));
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 100_000 - 10_000 - 280 - 500 + 10_000);
    });

    test('purchases and refunds beside a closure: the closed card keeps no balance and money is conserved', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      const simulations = Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? t.admin.simulateRefund(card.id, 100) : t.admin.simulatePurchase(card.id, 300),
      );
      const [closed, ...moves] = await Promise.all([t.core.close(alice.caller, card.id), ...simulations]);
      const approved = (side: number) => moves.filter((m, i) => i % 2 === side && m.status === 'Approved').length;
      const read = await t.core.getCard(alice.caller, card.id);
      assert.equal(read.status, 'closed');
      assert.equal(read.balance, 0);
      // A refund is never declined: one that lands after the closure reaches the wallet instead of the card.
      assert.equal(approved(0), 6);
      assert.ok(closed.balanceWithdrawn <= 5_000 + 100 * approved(0) - 300 * approved(1));
      // A purchase while the closure holds the balance (a Pending line) finds nothing left to spend.
      assert.ok(
        moves.every(
          (m, i) => m.status === 'Approved' || m.declineCode === 'card_closed' || (i % 2 === 1 && m.declineCode === 'insufficient_funds'),
        ),
      );
      assert.equal((await t.core.walletBalance(alice.caller)).balance, topup.walletBalance + 5_000 + 100 * approved(0) - 300 * approved(1));
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0);
    });

    test('a storm of mixed operations from many users at once: only refusals, no deadlock, money conserved', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 0, withdrawCooldownSeconds: 0 } });
      const { bin, plan } = await catalogue(t);
      const users = [];
      for (let i = 0; i < 6; i++) users.push(await newCustomer(t, 20_000, `User ${i}`));
      const cards = [];
      for (const user of users) for (let i = 0; i < 2; i++) cards.push({ user, card: await newCard(t, user, `Card ${i}`) });
      const moved = { deposits: 6 * 20_000, fees: 12 * plan.creationFee, purchases: 0, refunds: 0 };
      let seed = 7;
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed % n;
      };
      for (let batch = 0; batch < 12; batch++) {
        const attempts: Promise<void>[] = [];
        for (let i = 0; i < 30; i++) {
          const { user, card } = cards[next(cards.length)]!;
          const amount = 100 + next(3_000);
          const op = next(8);
          attempts.push(
            (async () => {
              if (op === 0) {
                await t.admin.deposit(user.userId, amount);
                moved.deposits += amount;
              } else if (op <= 2) {
                moved.fees += (await t.core.topup(user.caller, card.id, { amount: amount + 400 })).platformFee;
              } else if (op === 3) {
                await t.core.withdraw(user.caller, card.id, { amount });
              } else if (op === 4) {
                await t.core.createCard(user.caller, { bin_id: bin.id, planId: plan.id, name: 'More' });
                moved.fees += plan.creationFee;
              } else if (op <= 6) {
                if ((await t.admin.simulatePurchase(card.id, amount)).status === 'Approved') moved.purchases += amount;
              } else {
                if ((await t.admin.simulateRefund(card.id, amount)).status === 'Approved') moved.refunds += amount;
              }
            })(),
          );
        }
        await settle(attempts);
        t.clock.advance(1_000);
      }
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.deepEqual(ledger.unbalancedJournals, []);
      assert.equal(ledger.total, 0);
      let held = 0;
      for (const user of users) {
        held += (await t.core.walletBalance(user.caller)).balance;
        for (const card of await t.core.listCards(user.caller)) held += card.balance;
      }
      assert.equal(held, moved.deposits - moved.fees - moved.purchases + moved.refunds);
    });

    test('simultaneous purchases never take a card below zero', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      const results = await Promise.all(Array.from({ length: 15 }, () => t.admin.simulatePurchase(card.id, 100)));
      assert.equal(results.filter((r) => r.status === 'Approved').length, 10);
      assert.equal(results.filter((r) => r.declineCode === 'insufficient_funds').length, 5);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 0);
    });
  });
}
