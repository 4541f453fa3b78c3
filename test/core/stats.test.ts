import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

for (const dialect of dialects()) {
  describe(`service statistics (${dialect})`, () => {
    test('a fresh service: nothing counted', async (ctx) => {
      const t = await useCore(ctx, dialect);
      assert.deepEqual(await t.funding.stats.read(), {
        day: '2026-03-01',
        users: 0,
        cards: { processing: 0, active: 0, frozen: 0, closed: 0 },
        walletTotal: 0,
        cardTotal: 0,
        feesToday: 0,
        pendingDeposits: { count: 0, amount: 0 },
      });
    });

    test("users, cards by state, money held, today's fees (UTC day) and pending requests", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const bob = await newCustomer(t, 50_000, 'Bob');
      // Yesterday's fees do not count today.
      t.clock.set('2026-02-28T23:59:00.000Z');
      const old = await newCard(t, alice, 'Old');
      t.clock.set('2026-03-01T00:00:00.000Z');
      const card = await newCard(t, alice, 'Ads');
      const frozen = await newCard(t, bob, 'Frozen');
      await t.core.freeze(bob.caller, frozen.id);
      await t.core.close(alice.caller, old.id);
      const topup = await t.core.topup(alice.caller, card.id, { amount: 10_000 });
      await t.funding.deposits.request({ userId: bob.userId, amount: 2_500 });
      await t.funding.deposits.request({ userId: alice.userId, amount: 1_000 });
      const approved = await t.funding.deposits.request({ userId: alice.userId, amount: 700 });
      await t.funding.deposits.approve(approved.id, 'admin-cli');
      t.clock.set('2026-03-01T23:59:59.000Z');

      const stats = await t.funding.stats.read();
      const plan = (await t.core.listPlans())[0]!;
      assert.equal(stats.day, '2026-03-01');
      assert.equal(stats.users, 2);
      assert.deepEqual(stats.cards, { processing: 0, active: 1, frozen: 1, closed: 1 });
      assert.equal(stats.feesToday, 2 * plan.creationFee + topup.platformFee);
      assert.equal(
        stats.walletTotal,
        (await t.core.walletBalance(alice.caller)).balance + (await t.core.walletBalance(bob.caller)).balance,
      );
      assert.equal(stats.cardTotal, 10_000);
      assert.deepEqual(stats.pendingDeposits, { count: 2, amount: 3_500 });

      t.clock.set('2026-03-02T00:00:00.000Z');
      assert.equal((await t.funding.stats.read()).feesToday, 0);
    });
  });
}
