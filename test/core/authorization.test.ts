import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuthorizationInput } from '../../src/core/authorization/types.js';
import type { AutoTopupEvent, CardTransactionEvent } from '../../src/core/operations/events.js';
import { dialects, useCore } from './dialects.js';
import { funded, purchase, setCard } from '../helpers/authorization.js';
import type { TestCore } from '../helpers/core.js';

async function events<E>(t: TestCore, kind: string): Promise<E[]> {
  return (await t.core.events.pending(1_000)).map((p) => p.event).filter((e) => e.kind === kind) as E[];
}

async function assertLedgerExact(t: TestCore): Promise<void> {
  const ledger = await t.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.deepEqual(ledger.unbalancedJournals, []);
  assert.equal(ledger.total, 0);
}

for (const dialect of dialects()) {
  describe(`authorization engine (${dialect})`, () => {
    test('an approval is a hold: a Pending line, the balance reduced, the ledger exact; clearing settles it', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card, balance, lines } = await funded(t);
      const asked = purchase(card.id, 4_210);
      const decision = await t.core.authorize(asked);
      assert.equal(decision.approved, true);
      assert.equal(decision.cardBalance, 5_790);
      assert.equal(await balance(), 5_790);
      const [held] = await lines();
      assert.deepEqual(
        [held?.id, held?.status, held?.type, held?.side, held?.amount],
        [decision.authorizationId, 'Pending', 'purchase', 'Debit', 4_210],
      );
      await assertLedgerExact(t);
      const cleared = await t.core.clearAuthorization({ providerTransactionId: asked.providerTransactionId });
      assert.deepEqual([cleared.status, cleared.clearedAmount, cleared.cardBalance], ['cleared', 4_210, 5_790]);
      assert.equal((await lines())[0]?.status, 'Approved');
      await assertLedgerExact(t);
    });

    test('decisions follow the order state, type, controls, funds, each with its fix', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await funded(t, 1_000);
      const decide = async (amount: number, more: Partial<AuthorizationInput> = {}) => {
        const d = await t.core.authorize(purchase(card.id, amount, more));
        return [d.declineCode, d.fix];
      };
      await setCard(t, card.id, { per_purchase_limit: 100, blocked_categories: '["gambling"]' });
      await t.core.freeze(alice.caller, card.id);
      assert.deepEqual(await decide(5_000), ['card_frozen', { kind: 'unfreeze' }]);
      await t.core.unfreeze(alice.caller, card.id);
      assert.deepEqual(await decide(5_000), ['per_purchase_limit', { kind: 'raise_limit', control: 'per_purchase_limit', to: 5_000 }]);
      await setCard(t, card.id, { per_purchase_limit: null, daily_limit: 500, monthly_limit: 700 });
      assert.deepEqual(await decide(300), [null, null]);
      assert.deepEqual(await decide(300), ['daily_limit', { kind: 'raise_limit', control: 'daily_limit', to: 600 }]);
      t.clock.advance(86_400_000);
      assert.deepEqual(await decide(450), ['monthly_limit', { kind: 'raise_limit', control: 'monthly_limit', to: 750 }]);
      const gambling = { merchant: { name: 'Casino', mcc: '7995', country: 'US' } };
      assert.deepEqual(await decide(100, gambling), ['blocked_category', { kind: 'allow_category', category: 'gambling' }]);
      await setCard(t, card.id, { daily_limit: null, monthly_limit: null });
      // 700 left, the minimum top-up 5.00.
      assert.deepEqual(await decide(800), ['insufficient_funds', { kind: 'topup', amount: 500 }]);
      assert.deepEqual(await decide(2_000), ['insufficient_funds', { kind: 'topup', amount: 1_300 }]);
      const [declined] = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
      assert.deepEqual([declined?.status, declined?.declineCode], ['Declined', 'insufficient_funds']);
      const pushed = (await events<CardTransactionEvent>(t, 'card_transaction')).filter((e) => e.status === 'Declined');
      assert.deepEqual(pushed.at(-1)?.fix, { kind: 'topup', amount: 1_300 });
      await t.core.close(alice.caller, card.id);
      assert.deepEqual(await decide(100), ['card_closed', null]);
      await assertLedgerExact(t);
    });

    test('a single-use card takes one purchase, then is closed with its balance back in the wallet', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await funded(t, 2_000);
      await setCard(t, card.id, { type: 'single_use' });
      const first = purchase(card.id, 500);
      assert.equal((await t.core.authorize(first)).approved, true);
      assert.deepEqual((await t.core.authorize(purchase(card.id, 100))).fix, { kind: 'new_card_like' });
      const before = await wallet();
      const cleared = await t.core.clearAuthorization({ providerTransactionId: first.providerTransactionId });
      assert.equal(cleared.cardClosed, true);
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'closed');
      assert.equal(await wallet(), before + 1_500);
      await assertLedgerExact(t);
    });

    test('a merchant-locked card is locked to its first merchant', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t);
      await setCard(t, card.id, { type: 'merchant_locked' });
      const at = (name: string) => ({ merchant: { name, mcc: '5816', country: 'US' } });
      assert.equal((await t.core.authorize(purchase(card.id, 100, at('STEAM')))).approved, true);
      assert.equal((await t.core.authorize(purchase(card.id, 100, at('steam ')))).approved, true);
      const other = await t.core.authorize(purchase(card.id, 100, at('Netflix')));
      assert.deepEqual([other.declineCode, other.fix], ['merchant_locked', { kind: 'locked_to', merchant: 'STEAM' }]);
    });

    test('an authorization asked again, also at once, is decided once and answered the same', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card, balance } = await funded(t, 1_000);
      const asked = purchase(card.id, 600);
      const answers = await Promise.all(Array.from({ length: 8 }, () => t.core.authorize(asked)));
      assert.equal(new Set(answers.map((a) => a.authorizationId)).size, 1);
      assert.ok(answers.every((a) => a.approved));
      assert.equal(answers.filter((a) => !a.replayed).length, 1);
      assert.equal(await balance(), 400);
      const clearings = await Promise.all(
        Array.from({ length: 4 }, () => t.core.clearAuthorization({ providerTransactionId: asked.providerTransactionId })),
      );
      assert.equal(clearings.filter((c) => !c.replayed).length, 1);
      assert.equal(await balance(), 400);
      await assertLedgerExact(t);
    });

    test('a clearing may take less (the rest released) or up to 20 % more; beyond, or uncovered, it is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card, balance } = await funded(t, 1_200);
      const less = purchase(card.id, 500);
      await t.core.authorize(less);
      assert.equal((await t.core.clearAuthorization({ providerTransactionId: less.providerTransactionId, amount: 300 })).cardBalance, 900);
      const more = purchase(card.id, 500);
      await t.core.authorize(more);
      const over = await t.core.clearAuthorization({ providerTransactionId: more.providerTransactionId, amount: 601 });
      assert.deepEqual([over.status, over.reason], ['refused', 'over_tolerance']);
      assert.equal((await t.core.clearAuthorization({ providerTransactionId: more.providerTransactionId, amount: 600 })).cardBalance, 300);
      const uncovered = purchase(card.id, 300);
      await t.core.authorize(uncovered);
      const refused = await t.core.clearAuthorization({ providerTransactionId: uncovered.providerTransactionId, amount: 310 });
      assert.deepEqual([refused.status, refused.reason], ['refused', 'insufficient_funds']);
      assert.equal(await balance(), 0);
      await assertLedgerExact(t);
    });

    test('a void and an expiry release the hold, the line Reversed, pushed once', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card, balance, lines } = await funded(t, 1_000);
      const voided = purchase(card.id, 400);
      await t.core.authorize(voided);
      await t.core.voidAuthorization(voided.providerTransactionId);
      assert.equal((await t.core.voidAuthorization(voided.providerTransactionId)).replayed, true);
      assert.equal(await balance(), 1_000);
      const expiring = purchase(card.id, 300);
      await t.core.authorize(expiring);
      t.clock.advance(7 * 86_400_000 - 1_000);
      assert.equal((await t.core.expireAuthorizations()).length, 0);
      t.clock.advance(1_000);
      assert.equal((await t.core.expireAuthorizations()).length, 1);
      assert.equal(await balance(), 1_000);
      assert.deepEqual(
        (await lines()).filter((l) => l.type === 'purchase').map((l) => l.status),
        ['Reversed', 'Reversed'],
      );
      const reversed = (await events<CardTransactionEvent>(t, 'card_transaction')).filter((e) => e.status === 'Reversed');
      assert.equal(reversed.length, 2);
      await assertLedgerExact(t);
    });

    test('auto top-up runs during an authorization short of funds, as a real top-up, once a minute', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, balance, lines, wallet } = await funded(t, 1_000);
      await t.core.topup(alice.caller, card.id, { amount: 500 }); // the cardholder's cooldown now runs
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 1_000, auto_topup_min_balance: 0 });
      const before = await wallet();
      const decision = await t.core.authorize(purchase(card.id, 2_000));
      assert.deepEqual([decision.approved, decision.autoTopup?.outcome, decision.autoTopup?.amount], [true, 'done', 1_000]);
      assert.equal(await wallet(), before - 1_000 - 55); // 2.5 % + 0.30
      assert.equal(await balance(), 500);
      const topup = (await lines()).find((l) => l.type === 'topup');
      assert.deepEqual([topup?.merchantName, topup?.amount], ['Wallet top-up', 1_000]);
      assert.equal((await t.core.getCard(alice.caller, card.id)).deposit, 2_500);
      const again = await t.core.authorize(purchase(card.id, 2_000));
      assert.deepEqual([again.declineCode, again.autoTopup?.reason], ['insufficient_funds', 'rate_limited']);
      // Held back by the rate limit: nothing pushed again.
      const pushed = await events<AutoTopupEvent>(t, 'auto_topup');
      assert.deepEqual(
        pushed.map((e) => [e.outcome, e.reason, e.declineCode]),
        [['done', null, null]],
      );
      await assertLedgerExact(t);
    });

    test('auto top-up that cannot run (wallet short, plan limit) says why and the purchase is declined', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 0);
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 500, limit_amount: 400 });
      assert.equal((await t.core.authorize(purchase(card.id, 100))).autoTopup?.reason, 'plan_limit');
      t.clock.advance(60_000); // a failed attempt counts in the per-card minute too
      await setCard(t, card.id, { limit_amount: 100_000_000, auto_topup_amount: 5_000_000 });
      const d = await t.core.authorize(purchase(card.id, 100));
      assert.deepEqual([d.declineCode, d.autoTopup?.reason], ['insufficient_funds', 'wallet_short']);
      const pushed = await events<AutoTopupEvent>(t, 'auto_topup');
      assert.deepEqual(
        pushed.map((e) => [e.outcome, e.reason]),
        [
          ['failed', 'plan_limit'],
          ['failed', 'wallet_short'],
        ],
      );
      await assertLedgerExact(t);
    });

    test('a clearing that leaves the card below its minimum tops it up', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card, balance } = await funded(t, 1_000);
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 2_000, auto_topup_min_balance: 500 });
      const asked = purchase(card.id, 800);
      await t.core.authorize(asked);
      const cleared = await t.core.clearAuthorization({ providerTransactionId: asked.providerTransactionId });
      assert.equal(cleared.autoTopup?.outcome, 'done');
      assert.equal(await balance(), 2_200);
      await assertLedgerExact(t);
    });

    test('a held purchase pushes Pending; an at-once purchase exactly one Approved', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 1_000);
      await t.core.events.pending(); // nothing yet about purchases
      const held = await t.admin.simulatePurchase(card.id, 100, 'Hotel', { hold: true });
      assert.equal(held.status, 'Pending');
      const once = await t.admin.simulatePurchase(card.id, 200, 'Shop');
      assert.equal(once.status, 'Approved');
      const pushed = (await events<CardTransactionEvent>(t, 'card_transaction')).filter((e) => e.type === 'purchase');
      assert.deepEqual(
        pushed.map((e) => [e.transactionId, e.status]),
        [
          [held.transactionId, 'Pending'],
          [once.transactionId, 'Approved'],
        ],
      );
      const cleared = await t.admin.simulateClear(held.transactionId, 90);
      assert.deepEqual([cleared.status, cleared.cardBalance], ['Approved', 710]);
    });
  });
}
