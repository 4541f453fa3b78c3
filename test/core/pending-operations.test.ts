import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { CardServiceError } from '../../src/core/rules/errors.js';
import { SYSTEM_ACCOUNTS } from '../../src/core/ledger/ledger.js';
import { createPendingOperations, PENDING_GRACE_MS } from '../../src/core/operations/pending-operations.js';
import { ProviderError, type IssuedCard } from '../../src/core/provider/provider.js';
import { openDatabase } from '../../src/db/database.js';
import { catalogue, newCard, newCustomer, TEST_CARD_DATA_KEY, type Customer, type TestCore } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';
import { assertRefused } from './refusals.js';
import { eventually } from '../helpers/wait.js';
import { assertNotLogged, capturedLogger } from '../helpers/log.js';

/** What a user can see of their money and cards, and what the coupons have given. */
async function visible(t: CoreRuntime, customer: Customer) {
  const cards = await t.core.listCards(customer.caller);
  return {
    wallet: (await t.core.walletBalance(customer.caller)).balance,
    cards: cards.map((c) => ({ id: c.id, status: c.status, balance: c.balance, deposit: c.deposit })),
    statement: (await t.core.listTransactions(customer.caller, {})).data.map((x) => [x.type, x.amount, x.status]),
    coupons: (await t.admin.listCoupons()).map((c) => [c.code, Number(c.redemptions)]),
  };
}

async function pendingRows(t: CoreRuntime) {
  return t.database.db.selectFrom('pending_operations').selectAll().execute();
}

/** Balanced, every user balance equal to its entries, and the in-flight account holding exactly what is pending. */
async function assertLedgerClean(t: CoreRuntime) {
  const ledger = await t.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.deepEqual(ledger.unbalancedJournals, []);
  assert.equal(ledger.total, 0);
  const inFlight = await t.database.db
    .selectFrom('entries')
    .innerJoin('accounts', 'accounts.id', 'entries.account_id')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('entries.amount'), eb.lit(0)).as('total'))
    .where('accounts.code', '=', SYSTEM_ACCOUNTS.inFlight)
    .executeTakeFirstOrThrow();
  const held = (await pendingRows(t)).reduce((sum, row) => sum + Number(row.amount), 0);
  assert.equal(Number(inFlight.total), held, 'the in-flight account holds what is pending');
}

/** A card with `amount` on it, for a customer with a funded wallet. */
async function fundedCard(t: TestCore, amount = 5_000) {
  const alice = await newCustomer(t, 100_000);
  const card = await newCard(t, alice);
  await t.core.topup(alice.caller, card.id, { amount });
  return { alice, card };
}

/**
 * Fails unless `work` finishes within a few seconds: a provider call made inside a transaction that
 * `work` must wait for would never let it finish (SQLite's one connection, a Postgres row lock).
 */
async function finishesSoon<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    sleep(5_000).then(() => {
      throw new Error('blocked: the provider was called inside a transaction');
    }),
  ]);
}

for (const dialect of dialects()) {
  describe(`provider calls outside transactions (${dialect})`, () => {
    test('a withdrawal calls the provider outside any transaction: a top-up of the same card completes meanwhile', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 0 } });
      const { alice, card } = await fundedCard(t);
      const seen: boolean[] = [];
      t.provider.withdraw = async () => {
        if (t.database.sqlite) seen.push(t.database.sqlite.inTransaction);
        await finishesSoon(t.core.topup(alice.caller, card.id, { amount: 500 }));
      };
      const result = await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      assert.ok(seen.every((inTransaction) => !inTransaction));
      assert.equal(result.newCardBalance, 5_000 + 500 - 1_000);
      await assertLedgerClean(t);
    });

    test('a closure calls the provider outside any transaction, and moves the balance as it is once terminated', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 0 } });
      const { alice, card } = await fundedCard(t);
      const seen: boolean[] = [];
      t.provider.terminate = async () => {
        if (t.database.sqlite) seen.push(t.database.sqlite.inTransaction);
        await finishesSoon(t.core.topup(alice.caller, card.id, { amount: 500 }));
      };
      const closed = await t.core.close(alice.caller, card.id);
      assert.ok(seen.every((inTransaction) => !inTransaction));
      assert.equal(closed.balanceWithdrawn, 5_500);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 0);
      await assertLedgerClean(t);
    });

    test('a creation calls the provider outside any transaction: a top-up from the same wallet completes meanwhile', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 0 } });
      const { alice, card } = await fundedCard(t);
      const issue = t.provider.issue.bind(t.provider);
      const seen: boolean[] = [];
      t.provider.issue = async (request) => {
        if (t.database.sqlite) seen.push(t.database.sqlite.inTransaction);
        await finishesSoon(t.core.topup(alice.caller, card.id, { amount: 500 }));
        return issue(request);
      };
      const created = await newCard(t, alice, 'Second');
      assert.ok(seen.every((inTransaction) => !inTransaction));
      assert.equal(created.status, 'active');
      await assertLedgerClean(t);
    });
  });

  describe(`provider failures change nothing but the attempt (${dialect})`, () => {
    test('a withdrawal the provider refuses leaves balances, statement and ledger as they were; the attempt counts', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      t.sandbox.failNext('withdraw', 'provider offline');
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'PROVIDER_FAILED',
        'Failed to withdraw from card: provider offline',
      );
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'WITHDRAW_COOLDOWN',
        'Please wait 15 minutes between withdrawals',
      );
    });

    test('a closure the provider refuses leaves the card, balances and ledger as they were; the attempt counts', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      t.sandbox.failNext('terminate', 'boom');
      await assertRefused(t.core.close(alice.caller, card.id), 'PROVIDER_FAILED', 'Failed to close card: boom');
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
      await assertRefused(t.core.close(alice.caller, card.id), 'WITHDRAW_COOLDOWN', 'Please wait 15 minutes between withdrawals');
    });

    test('a creation the provider refuses gives back the fee and the coupon redemption, and writes no card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      const before = await visible(t, alice);
      const { bin, plan } = await catalogue(t);
      const input = { bin_id: bin.id, planId: plan.id, name: 'Ads', coupon_id: 'ONCE' };
      t.sandbox.failNext('issue', 'no stock');
      await assertRefused(t.core.createCard(alice.caller, input), 'PROVIDER_FAILED', 'Failed to issue card: no stock');
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
      const created = await t.core.createCard(alice.caller, input);
      assert.equal(created.status, 'active', 'the coupon can still be redeemed');
    });

    test('a withdrawal whose reply cannot be stored is undone whole, its attempt too (as when one transaction rolled back)', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      const failing = {
        commit: async () => {
          throw new Error('claim taken over');
        },
      };
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_000 }, failing), /claim taken over/);
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
      assert.equal((await t.core.withdraw(alice.caller, card.id, { amount: 1_000 })).newCardBalance, 4_000);
    });

    test('a creation whose reply hook refuses is undone whole: fee and coupon given back, no card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      const before = await visible(t, alice);
      const { bin, plan } = await catalogue(t);
      const input = { bin_id: bin.id, planId: plan.id, name: 'Ads', coupon_id: 'ONCE' };
      const failing = {
        commit: async () => {
          throw new CardServiceError('CARD_CLOSED');
        },
      };
      await assertRefused(t.core.createCard(alice.caller, input, failing), 'CARD_CLOSED', 'Card is closed');
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });

    test('a close refused by the cooldown another close took answers with that close: closed, or not when the provider refused it', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const terminate = t.provider.terminate.bind(t.provider);
      t.provider.terminate = async (id) => {
        await sleep(100);
        return terminate(id);
      };
      const [first, second] = await Promise.allSettled([t.core.close(alice.caller, card.id), t.core.close(alice.caller, card.id)]);
      const outcomes = [first, second].map((r) => (r.status === 'fulfilled' ? 'closed' : (r.reason as { code: string }).code)).sort();
      assert.deepEqual(outcomes, ['ALREADY_CLOSED', 'closed']);

      const other = await newCard(t, alice, 'Other');
      t.sandbox.failNext('terminate', 'boom');
      const refused = await Promise.allSettled([t.core.close(alice.caller, other.id), t.core.close(alice.caller, other.id)]);
      const codes = refused.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'closed')).sort();
      assert.deepEqual(codes, ['PROVIDER_FAILED', 'WITHDRAW_COOLDOWN']);
      assert.equal((await t.core.getCard(alice.caller, other.id)).status, 'active');
    });

    test('a withdrawal the provider refuses after the card was closed (no cooldown) gives its amount to the wallet, as the closure would have', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { withdrawCooldownSeconds: 0 } });
      const { alice, card } = await fundedCard(t);
      const walletBefore = (await t.core.walletBalance(alice.caller)).balance;
      t.provider.withdraw = async () => {
        await t.core.close(alice.caller, card.id);
        throw new ProviderError('card terminated');
      };
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'PROVIDER_FAILED',
        'Failed to withdraw from card: card terminated',
      );
      const read = await t.core.getCard(alice.caller, card.id);
      assert.deepEqual([read.status, read.balance], ['closed', 0]);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, walletBefore + 5_000);
      const closures = (await t.core.listTransactions(alice.caller, { card_id: card.id })).data.filter((x) => x.type === 'card_close');
      assert.deepEqual(closures.map((x) => x.amount).sort(), [1_000, 4_000]);
      await assertLedgerClean(t);
    });
  });

  describe(`provider calls that never answer are given up after PROVIDER_TIMEOUT_MS (${dialect})`, () => {
    // Today's figure is 20 s; a short one here. Without the timeout these operations never end (the test's own limit).
    const settings = { providerTimeoutMs: 50 };
    const never = () => new Promise<never>(() => undefined);
    const LIMIT = { timeout: 15_000 };

    test('a closure: Failed to close card, the card and balances as they were, nothing left pending', LIMIT, async (ctx) => {
      const t = await useCore(ctx, dialect, { settings });
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      t.provider.terminate = never;
      await assertRefused(
        t.core.close(alice.caller, card.id),
        'PROVIDER_FAILED',
        'Failed to close card: the card provider did not answer within 50 ms',
      );
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });

    test('a withdrawal: Failed to withdraw from card, the amount back on the card', LIMIT, async (ctx) => {
      const t = await useCore(ctx, dialect, { settings });
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      t.provider.withdraw = never;
      await assertRefused(
        t.core.withdraw(alice.caller, card.id, { amount: 1_000 }),
        'PROVIDER_FAILED',
        'Failed to withdraw from card: the card provider did not answer within 50 ms',
      );
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });

    test('a creation: Failed to issue card, the fee and coupon back, no card written', LIMIT, async (ctx) => {
      const t = await useCore(ctx, dialect, { settings });
      const alice = await newCustomer(t, 10_000);
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      const before = await visible(t, alice);
      const { bin, plan } = await catalogue(t);
      t.provider.issue = never;
      await assertRefused(
        t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Ads', coupon_id: 'ONCE' }),
        'PROVIDER_FAILED',
        'Failed to issue card: the card provider did not answer within 50 ms',
      );
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });

    test('a freeze: Failed to freeze card, the card still active and free for the next change', LIMIT, async (ctx) => {
      const t = await useCore(ctx, dialect, { settings });
      const { alice, card } = await fundedCard(t);
      const freeze = t.provider.freeze.bind(t.provider);
      t.provider.freeze = never;
      await assertRefused(
        t.core.freeze(alice.caller, card.id),
        'PROVIDER_FAILED',
        'Failed to freeze card: the card provider did not answer within 50 ms',
      );
      assert.equal((await t.core.getCard(alice.caller, card.id)).status, 'active');
      t.provider.freeze = freeze;
      assert.equal((await t.core.freeze(alice.caller, card.id)).status, 'frozen');
    });

    test('a card the provider issues after the creation was given up is terminated there at once', LIMIT, async (ctx) => {
      const t = await useCore(ctx, dialect, { settings });
      const alice = await newCustomer(t, 10_000);
      const issue = t.provider.issue.bind(t.provider);
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      t.provider.issue = async (request) => {
        await answered;
        return issue(request);
      };
      await assertRefused(newCard(t, alice), 'PROVIDER_FAILED', 'Failed to issue card: the card provider did not answer within 50 ms');
      answer();
      await eventually('the late card is terminated', () => t.sandbox.calls.some((c) => c.operation === 'terminate'));
      const issued = t.sandbox.calls.find((c) => c.operation === 'issue');
      assert.ok(issued?.ok);
      assert.deepEqual(await t.core.listCards(alice.caller), []);
      await assertLedgerClean(t);
    });
  });

  describe(`operations interrupted between their transactions (${dialect})`, () => {
    /** The provider fails in a way that says nothing of what it did: the operation stays pending. */
    function crashAt(t: TestCore, operation: 'withdraw' | 'terminate' | 'issue') {
      t.provider[operation] = async () => {
        throw new Error('connection reset');
      };
    }

    test('an interrupted withdrawal holds its amount until the recovery gives it back, with its cooldown attempt', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      const withdraw = t.provider.withdraw.bind(t.provider);
      crashAt(t, 'withdraw');
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_000 }), /connection reset/);
      assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 4_000, 'held while pending');
      assert.equal((await pendingRows(t)).length, 1);
      await assertLedgerClean(t);

      const recovery = createPendingOperations(t.database.db, t.clock);
      assert.deepEqual(await recovery.recover(), [], 'not before the grace period');
      t.clock.advance(PENDING_GRACE_MS);
      const recovered = await recovery.recover();
      assert.deepEqual(
        recovered.map((r) => [r.kind, r.amount]),
        [['withdraw', 1_000]],
      );
      assert.deepEqual(await recovery.recover(), [], 'settled once');
      assert.deepEqual(await visible(t, alice), before);
      await assertLedgerClean(t);
      t.provider.withdraw = withdraw;
      const done = await t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      assert.equal(done.newCardBalance, 4_000);
    });

    test('an interrupted creation gives back the fee and the coupon; an interrupted closure leaves the card as it was', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      await t.admin.createCoupon({ code: 'ONCE', kind: 'amount', value: 100, maxRedemptions: 1 });
      const before = await visible(t, alice);
      const { bin, plan } = await catalogue(t);
      crashAt(t, 'issue');
      crashAt(t, 'terminate');
      await assert.rejects(t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'X', coupon_id: 'ONCE' }), /reset/);
      await assert.rejects(t.core.close(alice.caller, card.id), /connection reset/);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, before.wallet - (plan.creationFee - 100), 'the fee is held');
      assert.deepEqual((await pendingRows(t)).map((r) => r.kind).sort(), ['close', 'create_card']);
      await assertLedgerClean(t);

      t.clock.advance(PENDING_GRACE_MS);
      const recovered = await createPendingOperations(t.database.db, t.clock).recover();
      assert.deepEqual(recovered.map((r) => r.kind).sort(), ['close', 'create_card']);
      assert.deepEqual(await visible(t, alice), before);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
      t.provider.terminate = async () => undefined;
      assert.equal((await t.core.close(alice.caller, card.id)).balanceWithdrawn, 5_000, 'no cooldown left by the crash');
    });

    test("the user's next withdrawal settles their interrupted one first, once the grace period has passed", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const withdraw = t.provider.withdraw.bind(t.provider);
      crashAt(t, 'withdraw');
      await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_000 }), /connection reset/);
      t.provider.withdraw = withdraw;
      t.clock.advance(PENDING_GRACE_MS);
      const done = await t.core.withdraw(alice.caller, card.id, { amount: 5_000 });
      assert.equal(done.newCardBalance, 0);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });

    test('an operation whose provider answers after the recovery settled it changes nothing more', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { alice, card } = await fundedCard(t);
      const before = await visible(t, alice);
      let answer: () => void = () => undefined;
      t.provider.withdraw = () => new Promise<void>((resolve) => (answer = resolve));
      const late = t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      while ((await pendingRows(t)).length === 0) await sleep(5);
      t.clock.advance(PENDING_GRACE_MS);
      assert.equal((await createPendingOperations(t.database.db, t.clock).recover()).length, 1);
      answer();
      await assert.rejects(late, /settled by the recovery/);
      assert.deepEqual(await visible(t, alice), before);
      await assertLedgerClean(t);
    });

    test('recoveries running at once settle each interrupted operation once', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { withdrawCooldownSeconds: 0 } });
      const customers = [];
      for (let i = 0; i < 4; i++) {
        const customer = await newCustomer(t, 100_000, `User ${i}`);
        const card = await newCard(t, customer);
        await t.core.topup(customer.caller, card.id, { amount: 5_000 });
        customers.push({ customer, card });
      }
      crashAt(t, 'withdraw');
      for (const { customer, card } of customers) {
        for (let i = 0; i < 3; i++) await assert.rejects(t.core.withdraw(customer.caller, card.id, { amount: 1_000 }), /reset/);
      }
      assert.equal((await pendingRows(t)).length, 12);
      t.clock.advance(PENDING_GRACE_MS);
      // On Postgres each recovery on a connection pool of its own, as in another process.
      const target = t.database.target;
      const others = target.kind === 'postgres' ? [openDatabase(target.url), openDatabase(target.url)] : [];
      ctx.after(() => Promise.all(others.map((o) => o.close())));
      const dbs = others.length > 0 ? others.map((o) => o.db) : [t.database.db, t.database.db];
      const settled = (await Promise.all(dbs.map((db) => createPendingOperations(db, t.clock).recover()))).flat();
      assert.equal(settled.length, 12);
      assert.equal(new Set(settled.map((s) => s.id)).size, 12);
      for (const { customer, card } of customers) assert.equal((await t.core.getCard(customer.caller, card.id)).balance, 5_000);
      assert.deepEqual(await pendingRows(t), []);
      await assertLedgerClean(t);
    });
  });
}

test('starting the core settles operations a crash left pending, before anything is served', async (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-pending-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cards.db');
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const first = await startCore({ databaseUrl: file, cardDataKey: TEST_CARD_DATA_KEY, clock });
  const alice = await newCustomer(first, 100_000);
  const card = await newCard(first, alice);
  await first.core.topup(alice.caller, card.id, { amount: 5_000 });
  const before = await visible(first, alice);
  first.provider.withdraw = async () => {
    throw new Error('killed');
  };
  await assert.rejects(first.core.withdraw(alice.caller, card.id, { amount: 1_000 }), /killed/);
  await first.close();

  clock.advance(PENDING_GRACE_MS);
  const second = await startCore({ databaseUrl: file, cardDataKey: TEST_CARD_DATA_KEY, clock });
  ctx.after(() => second.close());
  assert.deepEqual(await pendingRows(second), []);
  assert.deepEqual(await visible(second, alice), before);
  await assertLedgerClean(second);
});

test('a provider call that succeeds after it was given up is logged as an error for the operator, without card data', async (ctx) => {
  const { logger, text } = capturedLogger();
  const t = await startCore({
    databaseUrl: ':memory:',
    cardDataKey: TEST_CARD_DATA_KEY,
    clock: new FakeClock('2026-03-01T12:00:00.000Z'),
    logger,
    settings: { providerTimeoutMs: 50 },
  });
  ctx.after(() => t.close());
  const alice = await newCustomer(t, 10_000);
  const issue = t.provider.issue.bind(t.provider);
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const issued: IssuedCard[] = [];
  t.provider.issue = async (request) => {
    await answered;
    const card = await issue(request);
    issued.push(card);
    return card;
  };
  await assertRefused(newCard(t, alice), 'PROVIDER_FAILED', 'Failed to issue card: the card provider did not answer within 50 ms');
  answer();
  await eventually('the late success is logged', () => text().includes('the card provider finished a call after it was given up'));
  const line = JSON.parse(
    text()
      .split('\n')
      .find((l) => l.includes('after it was given up'))!,
  ) as { level: number; provider: unknown };
  assert.equal(line.level, 50, 'an error');
  assert.deepEqual(line.provider, { operation: 'issue', providerCardId: issued[0]!.providerCardId, terminated: true });
  assertNotLogged(text(), [issued[0]!.pan, issued[0]!.cvv]);
});
