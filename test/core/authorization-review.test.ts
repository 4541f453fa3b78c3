import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postJournal } from '../../src/core/ledger/ledger.js';
import { newCard, type TestCore } from '../helpers/core.js';
import { holdNextCall } from '../helpers/holds.js';
import { dialects, useCore } from './dialects.js';
import { funded, purchase, setCard } from '../helpers/authorization.js';

// The authorization engine's edges a review found: closed and frozen cards, late clearings and voids,
// auto top-up's limits, a single-use card's closure.

async function assertLedgerExact(t: TestCore): Promise<void> {
  const ledger = await t.admin.checkLedger();
  assert.deepEqual([ledger.differences, ledger.unbalancedJournals, ledger.total], [[], [], 0]);
}

for (const dialect of dialects()) {
  describe(`authorization engine, reviewed edges (${dialect})`, () => {
    test('a used single-use card, closed, declines card_closed with "New card like this"', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 2_000);
      await setCard(t, card.id, { type: 'single_use' });
      const first = purchase(card.id, 500);
      await t.core.authorize(first);
      assert.equal((await t.core.clearAuthorization({ providerTransactionId: first.providerTransactionId })).cardClosed, true);
      const next = await t.core.authorize(purchase(card.id, 100));
      assert.deepEqual([next.declineCode, next.fix], ['card_closed', { kind: 'new_card_like' }]);
    });

    test('a hold released, or a smaller clearing, after its card was closed credits the wallet; the ledger stays exact', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, balance, wallet } = await funded(t, 10_000);
      const voided = purchase(card.id, 3_000);
      const expiring = purchase(card.id, 2_000);
      const smaller = purchase(card.id, 1_000);
      for (const asked of [voided, expiring, smaller]) assert.equal((await t.core.authorize(asked)).approved, true);
      const before = await wallet();
      assert.equal((await t.core.close(alice.caller, card.id)).balanceWithdrawn, 4_000);
      assert.equal(await wallet(), before + 4_000);
      const released = await t.core.voidAuthorization(voided.providerTransactionId);
      assert.deepEqual([released.status, released.cardBalance], ['voided', 0]);
      assert.equal(await wallet(), before + 7_000);
      const cleared = await t.core.clearAuthorization({ providerTransactionId: smaller.providerTransactionId, amount: 600 });
      assert.deepEqual([cleared.status, cleared.cardBalance], ['cleared', 0]);
      assert.equal(await wallet(), before + 7_400);
      t.clock.advance(7 * 86_400_000);
      assert.equal((await t.core.expireAuthorizations()).length, 1);
      assert.equal(await wallet(), before + 9_400);
      assert.equal(await balance(), 0);
      await assertLedgerExact(t);
    });

    test('ledger check reports a closed card holding a balance', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await funded(t, 1_000);
      await t.core.close(alice.caller, card.id);
      await assertLedgerExact(t);
      const row = await t.database.db.selectFrom('cards').select('account_id').where('id', '=', card.id).executeTakeFirstOrThrow();
      const wallet = alice.caller.walletAccountId;
      // A stranded credit, as the engine wrote one before a closed card's credits went to the wallet.
      await t.database.db.transaction().execute(async (trx) => {
        await postJournal(trx, {
          reference: 'stranded',
          kind: 'test',
          at: t.clock.now().toISOString(),
          postings: [
            { accountId: wallet, amount: -250 },
            { accountId: row.account_id, amount: 250 },
          ],
        });
      });
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(
        ledger.differences.map((d) => [d.accountId, d.kind, d.cached, d.closedCardId]),
        [[row.account_id, 'card', 250, card.id]],
      );
    });

    test('a refund is never declined: a frozen card gets it, a closed card’s owner gets it in the wallet', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, balance, wallet } = await funded(t, 1_000);
      await t.core.freeze(alice.caller, card.id);
      const frozen = await t.admin.simulateRefund(card.id, 300);
      assert.deepEqual([frozen.status, frozen.declineCode, frozen.cardBalance], ['Approved', null, 1_300]);
      assert.equal(await balance(), 1_300);
      await t.core.unfreeze(alice.caller, card.id);
      await t.core.close(alice.caller, card.id);
      const before = await wallet();
      const closed = await t.admin.simulateRefund(card.id, 200);
      assert.deepEqual([closed.status, closed.declineCode, closed.cardBalance], ['Approved', null, 0]);
      assert.equal(await wallet(), before + 200);
      await assertLedgerExact(t);
    });

    test('auto top-up runs only on an active card with no closure waiting on the provider', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await funded(t, 1_000);
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 2_000, auto_topup_min_balance: 5_000 });
      const first = purchase(card.id, 400);
      const second = purchase(card.id, 300);
      await t.core.authorize(first);
      await t.core.authorize(second);
      // The closure waits on the provider: a clearing then finds the card below its minimum.
      const call = holdNextCall(t, 'terminate');
      const closing = t.core.close(alice.caller, card.id);
      await call.reached;
      const during = await t.core.clearAuthorization({ providerTransactionId: first.providerTransactionId });
      assert.deepEqual([during.status, during.autoTopup], ['cleared', null]);
      call.release();
      assert.equal((await closing).balanceWithdrawn, 300);
      const before = await wallet();
      const after = await t.core.clearAuthorization({ providerTransactionId: second.providerTransactionId });
      assert.deepEqual([after.status, after.autoTopup, after.cardBalance], ['cleared', null, 0]);
      assert.equal(await wallet(), before);
      await assertLedgerExact(t);
    });

    test('a failed auto top-up counts in the per-card minute; one held back by it pushes nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 0);
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 500, limit_amount: 400 });
      const reasons = [];
      for (let i = 0; i < 3; i++) reasons.push((await t.core.authorize(purchase(card.id, 100))).autoTopup?.reason);
      assert.deepEqual(reasons, ['plan_limit', 'rate_limited', 'rate_limited']);
      const pushed = (await t.core.events.pending(1_000)).map((p) => p.event).filter((e) => e.kind === 'auto_topup');
      assert.equal(pushed.length, 1);
      t.clock.advance(60_000);
      assert.equal((await t.core.authorize(purchase(card.id, 100))).autoTopup?.reason, 'plan_limit');
    });

    test('auto top-up during an authorization tops up no more than the top-up maximum', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupMax: 2_000 } });
      const { card, balance } = await funded(t, 1_000);
      await setCard(t, card.id, { auto_topup_enabled: 1, auto_topup_amount: 5_000 });
      const capped = await t.core.authorize(purchase(card.id, 2_500));
      assert.deepEqual([capped.approved, capped.autoTopup?.outcome, capped.autoTopup?.amount], [true, 'done', 2_000]);
      assert.equal(await balance(), 500);
      t.clock.advance(60_000);
      await setCard(t, card.id, { auto_topup_amount: 500 });
      const short = await t.core.authorize(purchase(card.id, 3_000));
      assert.deepEqual([short.declineCode, short.autoTopup?.amount, short.cardBalance], ['insufficient_funds', 2_000, 2_500]);
      await assertLedgerExact(t);
    });

    test('ledger check beside live holds and releases shows no difference that is not there', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 100_000);
      let running = true;
      const traffic = (async () => {
        for (let i = 0; running && i < 400; i++) {
          const asked = purchase(card.id, 100);
          await t.core.authorize(asked);
          await t.core.voidAuthorization(asked.providerTransactionId);
        }
      })();
      const seen = [];
      for (let i = 0; i < 60; i++) seen.push(...(await t.admin.checkLedger()).differences);
      running = false;
      await traffic;
      assert.deepEqual(seen, []);
    });

    test('a clearing after its hold was released settles from the balance when covered; a void answers once released, refuses once cleared', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, balance } = await funded(t, 1_000);
      const voided = purchase(card.id, 400);
      const expired = purchase(card.id, 500);
      await t.core.authorize(voided);
      await t.core.authorize(expired);
      await t.core.voidAuthorization(voided.providerTransactionId);
      t.clock.advance(7 * 86_400_000);
      await t.core.expireAuthorizations();
      const again = await t.core.voidAuthorization(expired.providerTransactionId);
      assert.deepEqual([again.status, again.replayed, again.cardBalance], ['expired', true, 1_000]);
      const late = await t.core.clearAuthorization({ providerTransactionId: voided.providerTransactionId, amount: 450 });
      assert.deepEqual([late.status, late.clearedAmount, late.cardBalance], ['cleared', 450, 550]);
      const line = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data.find((l) => l.id === late.authorizationId);
      assert.deepEqual([line?.status, line?.amount], ['Approved', 450]);
      await assert.rejects(t.core.clearAuthorization({ providerTransactionId: expired.providerTransactionId, amount: 600 }), {
        code: 'not_pending',
      });
      await assert.rejects(t.core.voidAuthorization(voided.providerTransactionId), { code: 'not_pending', message: /cleared/ });
      assert.equal(await balance(), 550);
      await assertLedgerExact(t);
    });

    test('a single-use card closes after its first clearing without the cardholder’s cooldown; a failed closure is retried by the sweep', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await funded(t, 2_000);
      await setCard(t, card.id, { type: 'single_use' });
      await t.core.withdraw(alice.caller, card.id, { amount: 100 }); // the withdrawal cooldown now runs
      const first = purchase(card.id, 500);
      await t.core.authorize(first);
      assert.equal((await t.core.clearAuthorization({ providerTransactionId: first.providerTransactionId })).cardClosed, true);
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'closed');

      const other = await newCard(t, alice, 'Once');
      await t.core.topup(alice.caller, other.id, { amount: 1_000 });
      await setCard(t, other.id, { type: 'single_use' });
      const asked = purchase(other.id, 300);
      await t.core.authorize(asked);
      const call = holdNextCall(t, 'terminate');
      const clearing = t.core.clearAuthorization({ providerTransactionId: asked.providerTransactionId });
      await call.reached;
      call.release('provider down');
      assert.equal((await clearing).cardClosed, false);
      assert.equal((await t.core.getCard(alice.caller, other.id)).status, 'active');
      const before = await wallet();
      assert.deepEqual(await t.admin.closeSpentSingleUseCards(), { closed: 1, failed: 0 });
      assert.equal((await t.core.getCard(alice.caller, other.id)).status, 'closed');
      assert.equal(await wallet(), before + 700);
      assert.deepEqual(await t.admin.closeSpentSingleUseCards(), { closed: 0, failed: 0 });
      await assertLedgerExact(t);
    });
  });
}
