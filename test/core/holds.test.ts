import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { COMMANDS } from '../../src/admin/commands.js';
import { presentCard, presentTransaction } from '../../src/api/presenters.js';
import { reencryptCardData } from '../../src/core/keys/card-data-keys.js';
import { CardDataKeyError, createCardDataCipher } from '../../src/core/keys/secrets.js';
import { formatAmount } from '../../src/core/ledger/money.js';
import { createPendingOperations, PENDING_GRACE_MS } from '../../src/core/operations/pending-operations.js';
import { catalogue, newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { assertCounted, assertShown, holdNextCall, statementOf } from '../helpers/holds.js';
import { dialects, useCore } from './dialects.js';
import { assertRefused } from './refusals.js';

/** A customer with a card holding $50.00 (topped up once); the wallet after it. */
async function fundedCard(t: TestCore) {
  const alice = await newCustomer(t, 100_000);
  const card = await newCard(t, alice);
  const topup = await t.core.topup(alice.caller, card.id, { amount: 5_000 });
  return { alice, card, wallet: topup.walletBalance };
}

/** A customer with $1,000 whose card creation is held at the provider's `issue` until `call.release()`. */
async function heldCreation(t: TestCore) {
  const alice = await newCustomer(t, 100_000);
  const { bin, plan } = await catalogue(t);
  const call = holdNextCall(t, 'issue');
  const creation = t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Travel' });
  await call.reached;
  return { alice, plan, call, creation };
}

for (const dialect of dialects()) {
  describe(`nothing held is invisible (${dialect})`, () => {
    test('a withdrawal held at the provider is a Pending line; settled, the same line turns Approved', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await fundedCard(t);
      const before = await statementOf(t, alice, card.id);
      const call = holdNextCall(t, 'withdraw');
      const withdrawal = t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      await call.reached;

      await assertShown(t, alice, wallet);
      const held = await statementOf(t, alice, card.id);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 4_000);
      assert.equal(held.lines.length, before.lines.length + 1);
      const line = held.lines[0]!;
      assert.deepEqual([line.status, line.side, line.type, line.amount], ['Pending', 'Debit', 'withdrawal', 1_000]);
      assert.equal(presentTransaction(line).status, 'Pending');

      call.release();
      const done = await withdrawal;
      await assertShown(t, alice, wallet + 1_000);
      const settled = await statementOf(t, alice, card.id);
      assert.equal(settled.lines.length, held.lines.length, 'no line added: the pending one settled');
      assert.deepEqual([settled.lines[0]!.id, settled.lines[0]!.status, settled.lines[0]!.amount], [line.id, 'Approved', 1_000]);
      assert.equal(done.transactionId, line.id);
    });

    test('a withdrawal the provider refuses: its Pending line is removed and the balance is back', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 0 } });
      const { alice, card, wallet } = await fundedCard(t);
      const before = await statementOf(t, alice, card.id);
      const call = holdNextCall(t, 'withdraw');
      const withdrawal = t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      await call.reached;
      assert.equal((await statementOf(t, alice, card.id)).lines[0]!.status, 'Pending');
      call.release('declined upstream');
      await assertRefused(withdrawal, 'PROVIDER_FAILED', 'Failed to withdraw from card: declined upstream');
      await assertShown(t, alice, wallet);
      assert.deepEqual((await statementOf(t, alice, card.id)).lines, before.lines);
      // The statement goes on past the removed line's place.
      await t.core.topup(alice.caller, card.id, { amount: 500 });
      const after = await statementOf(t, alice, card.id);
      assert.equal(after.total, before.lines.length + 1);
      assert.equal(after.lines[0]!.type, 'topup');
    });

    test('a closure held at the provider is a Pending line for the balance; settled, Approved with what arrived meanwhile', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await fundedCard(t);
      const call = holdNextCall(t, 'terminate');
      const closure = t.core.close(alice.caller, card.id);
      await call.reached;

      await assertShown(t, alice, wallet);
      const held = await statementOf(t, alice, card.id);
      const line = held.lines[0]!;
      assert.deepEqual([line.status, line.side, line.type, line.amount], ['Pending', 'Debit', 'card_close', 5_000]);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 0);
      // A refund reaches the card while it is being closed; a purchase finds the balance held.
      assert.equal((await t.admin.simulateRefund(card.id, 300)).status, 'Approved');
      assert.equal((await t.admin.simulatePurchase(card.id, 1_000)).declineCode, 'insufficient_funds');
      await assertShown(t, alice, wallet);

      call.release();
      const closed = await closure;
      assert.equal(closed.balanceWithdrawn, 5_300);
      assert.equal(closed.transactionId, line.id);
      await assertShown(t, alice, wallet + 5_300);
      const settled = await statementOf(t, alice, card.id);
      const same = settled.lines.find((l) => l.id === line.id)!;
      assert.deepEqual([same.status, same.amount, same.type], ['Approved', 5_300, 'card_close']);
      assert.equal(settled.lines.length, held.lines.length + 2, 'the refund and the declined purchase, no closure line added');
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual([read.status, read.balance], ['closed', 0]);
    });

    test('a closure of an empty card holds nothing; a refund that arrives meanwhile goes to the wallet under a line of its own', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const { balance: wallet } = await t.core.walletBalance(alice.caller);
      const before = await statementOf(t, alice, card.id);
      const call = holdNextCall(t, 'terminate');
      const closure = t.core.close(alice.caller, card.id);
      await call.reached;
      assert.deepEqual((await statementOf(t, alice, card.id)).lines, before.lines, 'nothing held, no Pending line');
      assert.equal((await t.admin.simulateRefund(card.id, 300)).status, 'Approved');

      call.release();
      const closed = await closure;
      assert.equal(closed.balanceWithdrawn, 300);
      const line = (await statementOf(t, alice, card.id)).lines.find((l) => l.id === closed.transactionId)!;
      assert.deepEqual([line.status, line.side, line.type, line.amount], ['Approved', 'Debit', 'card_close', 300]);
      await assertShown(t, alice, wallet + 300);
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual([read.status, read.balance], ['closed', 0]);
    });

    test('a closure the provider refuses: its Pending line is removed and the card keeps its balance', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card, wallet } = await fundedCard(t);
      const before = await statementOf(t, alice, card.id);
      const call = holdNextCall(t, 'terminate');
      const closure = t.core.close(alice.caller, card.id);
      await call.reached;
      assert.equal((await statementOf(t, alice, card.id)).lines[0]!.status, 'Pending');
      call.release('busy');
      await assertRefused(closure, 'PROVIDER_FAILED', 'Failed to close card: busy');
      await assertShown(t, alice, wallet);
      assert.deepEqual((await statementOf(t, alice, card.id)).lines, before.lines);
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual([read.status, read.balance], ['active', 5_000]);
    });

    test('a creation held at the provider is a card in processing with its fee held; issued, the same card turns active', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, plan, call, creation } = await heldCreation(t);

      const [processing] = await assertShown(t, alice, 100_000);
      assert.ok(processing);
      assert.deepEqual(
        [processing.status, processing.name, processing.heldFee, processing.balance],
        ['processing', 'Travel', plan.creationFee, 0],
      );
      assert.equal(presentCard(processing).status, 'Processing');
      assert.equal(presentCard(await t.core.getCard(alice.caller, processing.id)).status, 'Processing');
      assert.equal(await t.core.walletHeld(alice.caller), plan.creationFee);
      // The operator sees the same.
      const fee = `$${formatAmount(plan.creationFee)}`;
      const listed = await COMMANDS['cards list']!.run(t, { user: alice.userId }, []);
      assert.ok(listed.human.includes(`processing (fee ${fee} held)`), listed.human);
      const shown = await COMMANDS['users show']!.run(t, {}, [alice.userId]);
      assert.ok(shown.human.includes(`; ${fee} held for cards being issued`), shown.human);
      // Nothing can be done with it yet.
      const id = processing.id;
      await assertRefused(t.core.freeze(alice.caller, id), 'CARD_NOT_READY_FREEZE', 'Card is not ready for freeze operation');
      await assertRefused(t.core.unfreeze(alice.caller, id), 'CARD_NOT_READY_UNFREEZE', 'Card is not ready for unfreeze operation');
      await assertRefused(t.core.topup(alice.caller, id, { amount: 1_000 }), 'CARD_PROCESSING', 'Card is still being issued');
      await assertRefused(t.core.getSensitiveDetails(alice.caller, id), 'CARD_PROCESSING', 'Card is still being issued');
      await assertRefused(t.core.close(alice.caller, id), 'CARD_NOT_READY_CLOSE', 'Card not ready for closure');
      await assertRefused(
        t.core.withdraw(alice.caller, id, { amount: 100 }),
        'CARD_NOT_READY_WITHDRAW',
        'Card is not ready for withdrawals',
      );
      await assert.rejects(t.admin.simulatePurchase(id, 100), /is still being issued/);
      await assert.rejects(t.admin.simulateOtp(id), /is still being issued/);
      await assert.rejects(t.admin.completeIssuance(id), /is still being issued/);
      await assertShown(t, alice, 100_000);

      call.release();
      const created = await creation;
      assert.equal(created.id, id);
      const [issued] = await assertShown(t, alice, 100_000 - plan.creationFee);
      assert.deepEqual([issued?.id, issued?.status, issued?.number, issued?.heldFee], [id, 'active', processing.number, undefined]);
      assert.equal(await t.core.walletHeld(alice.caller), 0);
      assert.equal((await t.core.getSensitiveDetails(alice.caller, id)).maskedPan, created.maskedPan);
    });

    test('a creation the provider refuses: its processing card is removed and the fee given back', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, plan, call, creation } = await heldCreation(t);
      assert.equal((await t.core.listCards(alice.caller))[0]?.status, 'processing');
      call.release('no stock');
      await assertRefused(creation, 'PROVIDER_FAILED', 'Failed to issue card: no stock');
      assert.deepEqual(await assertShown(t, alice, 100_000), []);
      // The next creation works as ever.
      assert.equal((await newCard(t, alice)).status, 'active');
      await assertShown(t, alice, 100_000 - plan.creationFee);
    });

    test('a creation whose key a rotation retired while the provider issued: refused, its card removed and the fee given back', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, call, creation } = await heldCreation(t);
      await reencryptCardData(t.database.db, t.cipher, createCardDataCipher(randomBytes(32)), t.clock.now().toISOString());
      call.release();
      await assert.rejects(
        creation,
        (error: unknown) => error instanceof CardDataKeyError && /a key rotation has retired/.test(error.message),
      );
      assert.deepEqual(await assertShown(t, alice, 100_000), []);
    });

    test('operations interrupted at the provider stay shown until the recovery removes what they held', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { withdrawCooldownSeconds: 0 } });
      const { alice, card } = await fundedCard(t);
      const other = await newCard(t, alice, 'Other');
      const explained = (await t.core.topup(alice.caller, other.id, { amount: 2_000 })).walletBalance;
      const { bin, plan } = await catalogue(t);
      const before = await statementOf(t, alice, card.id);
      for (const operation of ['withdraw', 'terminate', 'issue'] as const) {
        t.provider[operation] = async () => {
          throw new Error('connection reset');
        };
      }
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_500 }), /connection reset/);
      await assert.rejects(t.core.close(alice.caller, other.id), /connection reset/);
      await assert.rejects(t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'New' }), /connection reset/);

      const cards = await assertShown(t, alice, explained);
      assert.deepEqual(
        cards.map((c) => [c.name, c.status, c.balance]),
        [
          ['Ads', 'active', 3_500],
          ['Other', 'active', 0],
          ['New', 'processing', 0],
        ],
      );
      assert.equal((await statementOf(t, alice, card.id)).lines[0]!.status, 'Pending');
      assert.equal((await statementOf(t, alice, other.id)).lines[0]!.status, 'Pending');

      t.clock.advance(PENDING_GRACE_MS);
      const recovered = await createPendingOperations(t.database.db, t.clock).recover();
      assert.deepEqual(recovered.map((r) => r.kind).sort(), ['close', 'create_card', 'withdraw']);
      const after = await assertShown(t, alice, explained);
      assert.deepEqual(
        after.map((c) => [c.name, c.status, c.balance]),
        [
          ['Ads', 'active', 5_000],
          ['Other', 'active', 2_000],
        ],
      );
      assert.deepEqual((await statementOf(t, alice, card.id)).lines, before.lines);
      await assertCounted(t);
    });
  });
}
