import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDepositError } from '../../src/core/rules/deposit-errors.js';
import { MAX_PENDING_PER_USER } from '../../src/core/funding/deposits.js';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

/** The refusal code a call ends with (a deposit refusal or a core one); fails the test on success or anything else. */
async function refusalOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (isDepositError(error) || isCardServiceError(error)) return error.code;
    throw error;
  }
  assert.fail('expected a refusal');
}

for (const dialect of dialects()) {
  describe(`deposit requests (${dialect})`, () => {
    test('a request is stored pending with its amount, note and chat, and changes no balance', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const request = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000, note: '  wire\nref 8812 ', chatId: 1001 });
      assert.equal(request.status, 'pending');
      assert.equal(request.amount, 5_000);
      assert.equal(request.note, 'wire ref 8812');
      assert.equal(request.chatId, 1001);
      assert.equal(request.userName, 'Alice');
      assert.equal(request.createdAt, t.clock.now().toISOString());
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 1_000);
    });

    test('the amount follows the top-up rules: below 5, above 10,000 or a third decimal is refused, nothing stored', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      for (const amount of [499, 1_000_001, 0, -500, 12.5]) {
        assert.equal(await refusalOf(t.funding.deposits.request({ userId: alice.userId, amount })), 'VALIDATION', String(amount));
      }
      assert.deepEqual(await t.funding.deposits.list(), []);
    });

    test('a note longer than 200 characters is refused; an empty note is none', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      assert.equal(
        await refusalOf(t.funding.deposits.request({ userId: alice.userId, amount: 500, note: 'x'.repeat(201) })),
        'NOTE_TOO_LONG',
      );
      const request = await t.funding.deposits.request({ userId: alice.userId, amount: 500, note: '   ' });
      assert.equal(request.note, null);
    });

    test('an unknown user cannot ask', async (ctx) => {
      const t = await useCore(ctx, dialect);
      assert.equal(await refusalOf(t.funding.deposits.request({ userId: 'nobody', amount: 500 })), 'USER_NOT_FOUND');
    });

    test(`at most ${MAX_PENDING_PER_USER} requests of one user wait at once`, async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const bob = await newCustomer(t, 0, 'Bob');
      for (let i = 0; i < MAX_PENDING_PER_USER; i++) await t.funding.deposits.request({ userId: alice.userId, amount: 500 });
      assert.equal(await refusalOf(t.funding.deposits.request({ userId: alice.userId, amount: 500 })), 'TOO_MANY_PENDING');
      await t.funding.deposits.request({ userId: bob.userId, amount: 500 });
      const [oldest] = (await t.funding.deposits.list({ userId: alice.userId })).slice(-1);
      await t.funding.deposits.reject(oldest!.id, 'admin-cli', 'duplicate');
      await t.funding.deposits.request({ userId: alice.userId, amount: 500 });
    });

    test(`twelve requests of one user at once: exactly ${MAX_PENDING_PER_USER} wait, the others are refused`, async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, () => t.funding.deposits.request({ userId: alice.userId, amount: 500 })),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, MAX_PENDING_PER_USER);
      for (const r of results)
        if (r.status === 'rejected') assert.ok(isDepositError(r.reason) && r.reason.code === 'TOO_MANY_PENDING', String(r.reason));
      assert.equal((await t.funding.deposits.list({ userId: alice.userId, status: 'pending' })).length, MAX_PENDING_PER_USER);
    });

    test('approval credits the wallet through the ledger once and records who decided and when', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const { id } = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000 });
      t.clock.advance(60_000);
      const { request, walletBalance } = await t.funding.deposits.approve(id, 'telegram:42');
      assert.equal(walletBalance, 6_000);
      assert.equal(request.status, 'approved');
      assert.equal(request.decidedBy, 'telegram:42');
      assert.equal(request.decidedAt, t.clock.now().toISOString());
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 6_000);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.deepEqual(ledger.unbalancedJournals, []);
      assert.equal(ledger.total, 0);
    });

    test('a decided request cannot be decided again: a second approval or a rejection changes nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000 });
      await t.funding.deposits.approve(id, 'telegram:42');
      const again = t.funding.deposits.approve(id, 'telegram:43');
      await assert.rejects(
        again,
        (e) => isDepositError(e) && e.code === 'ALREADY_DECIDED' && e.message === `Deposit request #${id} is already approved`,
      );
      assert.equal(await refusalOf(t.funding.deposits.reject(id, 'telegram:43', 'late')), 'ALREADY_DECIDED');
      const stored = await t.funding.deposits.get(id);
      assert.equal(stored.decidedBy, 'telegram:42');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 5_000);
    });

    test('rejection needs a reason of at most 200 characters, keeps it, and moves no money', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000 });
      assert.equal(await refusalOf(t.funding.deposits.reject(id, 'admin-cli', '  ')), 'REASON_REQUIRED');
      assert.equal(await refusalOf(t.funding.deposits.reject(id, 'admin-cli', 'x'.repeat(201))), 'REASON_TOO_LONG');
      assert.equal((await t.funding.deposits.get(id)).status, 'pending');
      const rejected = await t.funding.deposits.reject(id, 'admin-cli', 'Payment not received');
      assert.equal(rejected.status, 'rejected');
      assert.equal(rejected.reason, 'Payment not received');
      assert.equal(await refusalOf(t.funding.deposits.approve(id, 'admin-cli')), 'ALREADY_DECIDED');
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 0);
    });

    test('an unknown request cannot be decided', async (ctx) => {
      const t = await useCore(ctx, dialect);
      assert.equal(await refusalOf(t.funding.deposits.approve(999, 'admin-cli')), 'REQUEST_NOT_FOUND');
      assert.equal(await refusalOf(t.funding.deposits.reject(999, 'admin-cli', 'no')), 'REQUEST_NOT_FOUND');
      assert.equal(await refusalOf(t.funding.deposits.get(999)), 'REQUEST_NOT_FOUND');
    });

    test('the list is newest first, filtered by status or user', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const bob = await newCustomer(t, 0, 'Bob');
      const first = await t.funding.deposits.request({ userId: alice.userId, amount: 500 });
      const second = await t.funding.deposits.request({ userId: bob.userId, amount: 600 });
      const third = await t.funding.deposits.request({ userId: alice.userId, amount: 700 });
      await t.funding.deposits.approve(second.id, 'admin-cli');
      assert.deepEqual(
        (await t.funding.deposits.list()).map((r) => r.id),
        [third.id, second.id, first.id],
      );
      assert.deepEqual(
        (await t.funding.deposits.list({ status: 'pending' })).map((r) => r.id),
        [third.id, first.id],
      );
      assert.deepEqual(
        (await t.funding.deposits.list({ userId: bob.userId })).map((r) => r.status),
        ['approved'],
      );
    });

    test('two approvals of one request at once: exactly one credits, the other reads already approved', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000 });
      const results = await Promise.allSettled([
        t.funding.deposits.approve(id, 'telegram:1'),
        t.funding.deposits.approve(id, 'telegram:2'),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.ok(isDepositError(refused?.reason) && refused.reason.code === 'ALREADY_DECIDED', String(refused?.reason));
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 5_000);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0);
    });

    test('ten approvals and rejections of one request at once: one decision, at most one credit', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 0);
      const { id } = await t.funding.deposits.request({ userId: alice.userId, amount: 5_000 });
      const attempts = Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0 ? t.funding.deposits.approve(id, `telegram:${i}`) : t.funding.deposits.reject(id, `telegram:${i}`, 'no'),
      );
      const results = await Promise.allSettled(attempts);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(isDepositError(r.reason) && r.reason.code === 'ALREADY_DECIDED');
      const decided = await t.funding.deposits.get(id);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, decided.status === 'approved' ? 5_000 : 0);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });
  });
}
