import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { createTestCore, newCard, newCustomer, type TestCore } from '../helpers/core.js';

/** A core on a SQLite file of its own (group commit, a reader beside the writer). */
async function fileCore(ctx: TestContext): Promise<TestCore> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-batch-'));
  // No time cap on a batch: a busy test machine may pause longer than the service's 20 ms between batch mates.
  const t = await createTestCore({ url: path.join(dir, 'cards.db'), groupCommit: { maxOpenMs: 60_000 } });
  ctx.after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return t;
}

const commitsOf = (t: TestCore) => ({ ...t.database.groupCommit! });

test('batch mates are isolated: one refused, one failing, one succeeding in one commit each get their own outcome, and the ledger is exact', async (ctx) => {
  const t = await fileCore(ctx);
  const alice = await newCustomer(t, 100_000);
  const [refusedCard, failingCard, succeedingCard] = [
    await newCard(t, alice, 'A'),
    await newCard(t, alice, 'B'),
    await newCard(t, alice, 'C'),
  ];
  const walletBefore = (await t.core.walletBalance(alice.caller)).balance;
  const before = commitsOf(t);

  const [refused, failed, succeeded] = await Promise.allSettled([
    // Within the top-up maximum, beyond the plan's limit and the wallet: refused after its attempt is claimed.
    t.core.topup(alice.caller, refusedCard.id, { amount: 999_999 }),
    t.core.topup(
      alice.caller,
      failingCard.id,
      { amount: 1_000 },
      {
        commit: async () => {
          throw new Error('the edge failed to store its reply');
        },
      },
    ),
    t.core.topup(alice.caller, succeedingCard.id, { amount: 2_000 }),
  ]);

  const after = commitsOf(t);
  assert.equal(after.commits - before.commits, 1, 'the three shared one commit');
  assert.equal(after.operations - before.operations, 2, 'the refusal kept its attempt; the failure kept nothing');

  assert.equal(refused.status, 'rejected');
  assert.ok(
    isCardServiceError(refused.reason) && ['CARD_LIMIT_EXCEEDED', 'INSUFFICIENT_WALLET_BALANCE'].includes(refused.reason.code),
    String(refused.reason),
  );
  assert.equal(failed.status, 'rejected');
  assert.match(String(failed.reason), /failed to store its reply/);
  assert.equal(succeeded.status, 'fulfilled');

  // The refusal's attempt counts (the cooldown runs); the failure left no attempt behind.
  await assert.rejects(
    t.core.topup(alice.caller, refusedCard.id, { amount: 1_000 }),
    (e) => isCardServiceError(e) && e.code === 'TOPUP_COOLDOWN',
  );
  const retried = await t.core.topup(alice.caller, failingCard.id, { amount: 1_000 });
  assert.equal(retried.newCardBalance, 1_000);

  assert.equal((await t.core.getCard(alice.caller, refusedCard.id)).balance, 0);
  assert.equal((await t.core.getCard(alice.caller, succeedingCard.id)).balance, 2_000);
  const charged = succeeded.value.totalCharged + retried.totalCharged;
  assert.equal((await t.core.walletBalance(alice.caller)).balance, walletBefore - charged);
  const ledger = await t.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.equal(ledger.total, 0);
});

test('simultaneous top-ups on one card batched together: exactly one wins, the rest hit the cooldown', async (ctx) => {
  const t = await fileCore(ctx);
  const alice = await newCustomer(t, 1_000_000);
  const card = await newCard(t, alice);
  const before = commitsOf(t);
  const results = await Promise.allSettled(Array.from({ length: 30 }, () => t.core.topup(alice.caller, card.id, { amount: 1_000 })));
  const after = commitsOf(t);
  assert.ok(after.commits - before.commits < 30, 'they were batched');
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  const codes = new Set(results.flatMap((r) => (r.status === 'rejected' && isCardServiceError(r.reason) ? [r.reason.code] : [])));
  assert.deepEqual(codes, new Set(['TOPUP_COOLDOWN']));
  assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 1_000);
  assert.deepEqual((await t.admin.checkLedger()).differences, []);
});

test('top-ups of many cards at once share commits, and each is present and exact afterwards', async (ctx) => {
  const t = await fileCore(ctx);
  const people = await Promise.all(Array.from({ length: 20 }, (_, i) => newCustomer(t, 100_000, `P${i}`)));
  const cards: Awaited<ReturnType<typeof newCard>>[] = [];
  for (const person of people) cards.push(await newCard(t, person));
  const before = commitsOf(t);
  const results = await Promise.all(people.map((p, i) => t.core.topup(p.caller, cards[i]!.id, { amount: 1_000 + i })));
  const after = commitsOf(t);
  assert.ok(after.commits - before.commits <= 2, `20 top-ups took ${after.commits - before.commits} commits`);
  assert.ok(after.largest >= 10);
  for (const [i, result] of results.entries()) {
    assert.equal(result.newCardBalance, 1_000 + i);
    assert.equal((await t.core.getCard(people[i]!.caller, cards[i]!.id)).balance, 1_000 + i);
  }
  assert.deepEqual((await t.admin.checkLedger()).differences, []);
});
