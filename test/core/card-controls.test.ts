import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { CardServiceError } from '../../src/core/rules/errors.js';
import { catalogue, newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

/** An authorization of the card at `at`, as the engine records one (pending unless cleared). */
async function authorized(t: TestCore, card: { id: string }, userId: string, amount: number, at: string, cleared?: number) {
  await t.database.db
    .insertInto('card_authorizations')
    .values({
      id: randomUUID(),
      provider_transaction_id: randomUUID(),
      card_id: card.id,
      user_id: userId,
      status: cleared === undefined ? 'pending' : 'cleared',
      amount,
      cleared_amount: cleared ?? null,
      currency: 'USD',
      merchant_name: 'STEAM',
      merchant_mcc: '5816',
      merchant_country: 'US',
      decline_code: null,
      expires_at: at,
      created_at: at,
      updated_at: at,
    })
    .execute();
}

const codeOf = (code: string) => (error: unknown) => (error as CardServiceError).code === code;

for (const dialect of dialects()) {
  describe(`a card's spending controls and auto top-up (${dialect})`, () => {
    test('a new card has no limits, blocks nothing, has spent nothing, and auto top-up is off', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      assert.deepEqual(await t.core.getControls(alice.caller, card.id), {
        perPurchaseLimit: null,
        dailyLimit: null,
        monthlyLimit: null,
        blockedCategories: [],
        spentToday: 0,
        spentThisMonth: 0,
      });
      assert.equal(card.type, 'multi_use');
      assert.deepEqual(card.autoTopup, { enabled: false, minBalance: 0, topupAmount: 0, lastTriggered: null });
    });

    test('controls given are set, those left out stay, null removes a limit, categories are kept once each', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await t.core.setControls(alice.caller, card.id, {
        perPurchaseLimit: 2_500,
        dailyLimit: 10_000,
        blockedCategories: ['gambling', 'crypto', 'gambling'],
      });
      const after = await t.core.setControls(alice.caller, card.id, { dailyLimit: null, monthlyLimit: 50_000 });
      assert.deepEqual(after, {
        perPurchaseLimit: 2_500,
        dailyLimit: null,
        monthlyLimit: 50_000,
        blockedCategories: ['gambling', 'crypto'],
        spentToday: 0,
        spentThisMonth: 0,
      });
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual(read.controls, {
        perPurchaseLimit: 2_500,
        dailyLimit: null,
        monthlyLimit: 50_000,
        blockedCategories: ['gambling', 'crypto'],
      });
    });

    test('spent today and this month count held and cleared purchases of this UTC day and month, in the card and the list', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const other = await newCard(t, alice, 'Other');
      await authorized(t, card, alice.userId, 1_000, '2026-03-01T01:00:00.000Z');
      await authorized(t, card, alice.userId, 3_000, '2026-03-01T02:00:00.000Z', 2_500);
      await authorized(t, card, alice.userId, 700, '2026-02-28T23:59:59.000Z');
      await authorized(t, card, alice.userId, 400, '2026-02-28T10:00:00.000Z');
      await authorized(t, card, alice.userId, 200, '2026-03-01T00:00:00.000Z');
      await authorized(t, other, alice.userId, 900, '2026-03-01T03:00:00.000Z');
      // The clock reads 2026-03-01T12:00Z: February's purchases are neither today's nor this month's.
      const controls = await t.core.getControls(alice.caller, card.id);
      assert.deepEqual([controls.spentToday, controls.spentThisMonth], [3_700, 3_700]);
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual([read.spentToday, read.spentThisMonth], [3_700, 3_700]);
      const listed = await t.core.listCards(alice.caller);
      assert.deepEqual(
        listed.map((c) => [c.name, c.spentToday, c.spentThisMonth]),
        [
          ['Ads', 3_700, 3_700],
          ['Other', 900, 900],
        ],
      );
      t.clock.set(new Date('2026-03-02T08:00:00.000Z'));
      const tomorrow = await t.core.getControls(alice.caller, card.id);
      assert.deepEqual([tomorrow.spentToday, tomorrow.spentThisMonth], [0, 3_700]);
    });

    test('refused: an unknown category, a limit of zero or below, a fraction of a cent; nothing changes', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assert.rejects(t.core.setControls(alice.caller, card.id, { blockedCategories: ['casino' as never] }), (e: CardServiceError) => {
        assert.equal(e.code, 'VALIDATION');
        assert.match(e.issues?.[0]?.message ?? '', /Unknown category: casino\. Allowed: gambling, crypto, adult/);
        return true;
      });
      await assert.rejects(t.core.setControls(alice.caller, card.id, { dailyLimit: 0 }), /Invalid input data/);
      await assert.rejects(t.core.setControls(alice.caller, card.id, { monthlyLimit: -500 }), codeOf('VALIDATION'));
      await assert.rejects(t.core.setControls(alice.caller, card.id, { perPurchaseLimit: 10.5 }), codeOf('VALIDATION'));
      assert.equal((await t.core.getControls(alice.caller, card.id)).dailyLimit, null);
    });

    test("another user's card reads as not found; a closed card refuses a change", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const bob = await newCustomer(t, 100_000, 'Bob');
      const card = await newCard(t, alice);
      await assert.rejects(t.core.getControls(bob.caller, card.id), codeOf('CARD_NOT_FOUND'));
      await assert.rejects(t.core.setControls(bob.caller, card.id, { dailyLimit: 1_000 }), codeOf('CARD_NOT_FOUND'));
      await assert.rejects(
        t.core.setAutoTopup(bob.caller, card.id, { enabled: true, minBalance: 0, topupAmount: 1_000 }),
        codeOf('CARD_NOT_FOUND'),
      );
      await t.core.close(alice.caller, card.id);
      await assert.rejects(t.core.setControls(alice.caller, card.id, { dailyLimit: 1_000 }), codeOf('CARD_CLOSED'));
      await assert.rejects(
        t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: 0, topupAmount: 1_000 }),
        codeOf('CARD_CLOSED'),
      );
    });

    test("auto top-up: set and read back; its amount within a top-up's bounds and the plan's limit; turning it off keeps the amounts", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const { plan } = await catalogue(t);
      assert.deepEqual(await t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: 1_000, topupAmount: 2_500 }), {
        enabled: true,
        minBalance: 1_000,
        topupAmount: 2_500,
        lastTriggered: null,
      });
      await assert.rejects(
        t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: 0, topupAmount: 100 }),
        /Invalid input data/,
      );
      await assert.rejects(
        t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: -1, topupAmount: 1_000 }),
        codeOf('VALIDATION'),
      );
      await assert.rejects(
        t.core.setAutoTopup(alice.caller, card.id, { enabled: true, minBalance: 0, topupAmount: Math.min(plan.limit + 100, 1_000_000) }),
        (e: CardServiceError) => /plan limit|Maximum top-up amount/.test(e.issues?.[0]?.message ?? ''),
      );
      const off = await t.core.setAutoTopup(alice.caller, card.id, { enabled: false });
      assert.deepEqual(off, { enabled: false, minBalance: 1_000, topupAmount: 2_500, lastTriggered: null });
      assert.deepEqual((await t.core.getCard(alice.caller, card.id)).autoTopup, off);
    });

    test('auto top-up cannot be turned on without a top-up amount, given now or before', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assert.rejects(t.core.setAutoTopup(alice.caller, card.id, { enabled: true }), (e: CardServiceError) => {
        assert.deepEqual(
          e.issues?.map((i) => [i.path, i.message]),
          [[['topup_amount'], 'Top-up amount is required to turn auto top-up on']],
        );
        return true;
      });
    });

    test('a card is created with the type asked for, multi_use by default; the type is on the card record', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const { bin, plan } = await catalogue(t);
      const single = await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Once', type: 'single_use' });
      const locked = await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Shop', type: 'merchant_locked' });
      assert.deepEqual([single.type, locked.type], ['single_use', 'merchant_locked']);
      assert.equal((await t.core.getCard(alice.caller, single.id)).type, 'single_use');
      await assert.rejects(
        t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Bad', type: 'reusable' as never }),
        codeOf('VALIDATION'),
      );
    });
  });
}
