import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { describe, test } from 'node:test';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';
import { assertRefused } from './refusals.js';

for (const dialect of dialects()) {
  describe(`transactions (spec 4.12, ${dialect})`, () => {
    test('transactions are paged 20 by default, newest first, with page, limit, total, totalPages, hasNext, hasPrev', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      for (let i = 1; i <= 24; i++) {
        t.clock.advance(1_000);
        await t.admin.simulatePurchase(card.id, i, `Shop ${i}`);
      }
      const first = await t.core.listTransactions(alice.caller, {});
      assert.deepEqual(first.pagination, { page: 1, limit: 20, total: 25, totalPages: 2, hasNext: true, hasPrev: false });
      assert.equal(first.data.length, 20);
      assert.equal(first.data[0]?.merchantName, 'Shop 24');
      assert.equal(first.data[0]?.amount, 24);
      assert.equal(first.data[0]?.cardName, 'Ads');
      assert.equal(first.data[0]?.maskedPan, card.maskedPan);
      const times = first.data.map((d) => d.createdAt);
      assert.deepEqual(times, [...times].sort().reverse());
      const second = await t.core.listTransactions(alice.caller, { page: 2 });
      assert.deepEqual(second.pagination, { page: 2, limit: 20, total: 25, totalPages: 2, hasNext: false, hasPrev: true });
      assert.equal(second.data.length, 5);
      assert.equal(second.data.at(-1)?.type, 'topup');
      const small = await t.core.listTransactions(alice.caller, { page: 3, limit: 10 });
      assert.deepEqual(small.pagination, { page: 3, limit: 10, total: 25, totalPages: 3, hasNext: false, hasPrev: true });
      assert.equal(small.data.length, 5);
      const beyond = await t.core.listTransactions(alice.caller, { page: 9, limit: 10 });
      assert.equal(beyond.data.length, 0);
      assert.equal(beyond.pagination.hasNext, false);
    });

    test('every page of a statement, from the newest end or the oldest, holds the next lines newest first, none missing or repeated', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000);
      const card = await newCard(t, alice);
      const other = await newCard(t, alice, 'Other');
      await t.core.topup(alice.caller, card.id, { amount: 5_000 });
      for (let i = 1; i <= 22; i++) {
        t.clock.advance(1_000);
        await t.admin.simulatePurchase(i % 3 === 0 ? other.id : card.id, i, `Shop ${i}`);
      }
      for (const card_id of [card.id, undefined]) {
        const whole = await t.core.listTransactions(alice.caller, { card_id, limit: 100 });
        for (const limit of [1, 4, 5, 7, 23]) {
          const pages = [];
          for (let page = 1; page <= Math.ceil(whole.pagination.total / limit) + 1; page++) {
            const { data } = await t.core.listTransactions(alice.caller, { card_id, page, limit });
            pages.push(...data.map((line) => line.id));
          }
          assert.deepEqual(
            pages,
            whole.data.map((line) => line.id),
            `limit ${limit}, card ${card_id ?? 'any'}`,
          );
        }
      }
    });

    test('an empty statement has zero pages', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const page = await t.core.listTransactions(alice.caller, {});
      assert.deepEqual(page, { data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasNext: false, hasPrev: false } });
    });

    test('the card filter restricts the statement to one card; other users never appear', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 100_000, 'Alice');
      const bob = await newCustomer(t, 100_000, 'Bob');
      const one = await newCard(t, alice, 'One');
      const two = await newCard(t, alice, 'Two');
      const bobs = await newCard(t, bob, 'Bobs');
      await t.core.topup(alice.caller, one.id, { amount: 1_000 });
      await t.core.topup(alice.caller, two.id, { amount: 2_000 });
      await t.core.topup(bob.caller, bobs.id, { amount: 3_000 });
      const all = await t.core.listTransactions(alice.caller, {});
      assert.equal(all.pagination.total, 2);
      const filtered = await t.core.listTransactions(alice.caller, { card_id: two.id });
      assert.equal(filtered.pagination.total, 1);
      assert.equal(filtered.data[0]?.cardId, two.id);
      assert.equal(filtered.data[0]?.amount, 2_000);
    });

    test('a card filter that is not a card id is refused: invalid card_id parameter', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      await assertRefused(t.core.listTransactions(alice.caller, { card_id: 'abc' }), 'INVALID_CARD_ID_PARAM', 'Invalid card_id parameter');
      await assertRefused(
        t.core.listTransactions(alice.caller, { card_id: '00000000-0000-4000-8000-000000000000' }),
        'CARD_NOT_FOUND',
        'Card not found or access denied',
      );
    });
  });

  describe(`OTPs (spec 4.13, 4.14, ${dialect})`, () => {
    test('the OTP list is found by card UUID and by integer number, newest first, with cardInfo', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice, 'Shopping');
      const first = await t.admin.simulateOtp(card.id, 1_999, 'Store A');
      t.clock.advance(1_000);
      const second = await t.admin.simulateOtp(card.id, 500, 'Store B');
      const byId = await t.core.listOtps(alice.caller, card.id);
      assert.deepEqual(byId.cardInfo, { id: card.number, nickname: 'Shopping' });
      assert.equal(typeof byId.cardInfo.id, 'number');
      assert.deepEqual(
        byId.otps.map((o) => o.code),
        [second.code, first.code],
      );
      assert.equal(byId.otps[0]?.amount, 500);
      assert.equal(byId.otps[0]?.maskedPan, card.maskedPan);
      assert.equal(byId.otps[0]?.cardName, 'Shopping');
      assert.equal(byId.otps[1]?.merchantName, 'Store A');
      const byNumber = await t.core.listOtps(alice.caller, String(card.number));
      assert.deepEqual(byNumber, byId);
    });

    test('an OTP list of an unknown card number is refused', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      await assertRefused(t.core.listOtps(alice.caller, '999999'), 'CARD_NOT_FOUND', 'Card not found or access denied');
      await assertRefused(t.core.listOtps(alice.caller, '-1'), 'CARD_NOT_FOUND', 'Card not found or access denied');
    });

    test('requesting an OTP with no e-mail in the mailbox is refused: no OTP found for this card', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      await assertRefused(t.core.requestOtp(alice.caller, card.id), 'NO_OTP', 'No OTP found for this card');
    });

    test('requesting an OTP takes the newest e-mail once and adds it to the card list', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice, 'Mail');
      const earlier = await t.admin.simulateOtpEmail(card.id);
      const { code } = await t.admin.simulateOtpEmail(card.id);
      const result = await t.core.requestOtp(alice.caller, card.id);
      assert.equal(result.message, 'OTP retrieved successfully');
      assert.equal(result.cardInfo.id, card.id);
      assert.equal(result.cardInfo.name, 'Mail');
      assert.equal(result.cardInfo.otpCode, code);
      assert.match(result.cardInfo.providerCardId, /^sbx_/);
      const list = await t.core.listOtps(alice.caller, card.id);
      assert.equal(list.otps[0]?.code, code);
      const older = await t.core.requestOtp(alice.caller, card.id);
      assert.equal(older.cardInfo.otpCode, earlier.code);
      await assertRefused(t.core.requestOtp(alice.caller, card.id), 'NO_OTP', 'No OTP found for this card');
    });

    test('an OTP e-mail that arrived while the card carried a temporary id is found once it is issued', async (ctx) => {
      const t = await useCore(ctx, dialect, { asyncIssue: true });
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const { code } = await t.admin.simulateOtpEmail(card.id);
      await t.admin.completeIssuance(card.id);
      assert.equal((await t.core.requestOtp(alice.caller, card.id)).cardInfo.otpCode, code);
    });

    test('an OTP request that fails while keeping the code leaves the e-mail in the mailbox', async (ctx) => {
      if (dialect !== 'sqlite') return ctx.skip('a failing insert is staged with a SQLite trigger');
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      const card = await newCard(t, alice);
      const { code } = await t.admin.simulateOtpEmail(card.id);
      await sql`create trigger otps_fail before insert on card_otps begin select raise(abort, 'disk full'); end`.execute(t.database.db);
      await assert.rejects(t.core.requestOtp(alice.caller, card.id), /disk full/);
      await sql`drop trigger otps_fail`.execute(t.database.db);
      assert.equal((await t.core.requestOtp(alice.caller, card.id)).cardInfo.otpCode, code);
    });
  });

  describe(`wallet (spec 4.15, ${dialect})`, () => {
    test('the wallet balance follows creation, top-up, withdrawal and closure, with its update time', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 10_000);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 10_000);
      const card = await newCard(t, alice);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 9_500);
      t.clock.advance(5_000);
      await t.core.topup(alice.caller, card.id, { amount: 1_000 });
      const wallet = await t.core.walletBalance(alice.caller);
      assert.equal(wallet.balance, 9_500 - 1_055);
      assert.equal(wallet.updatedAt, t.clock.now().toISOString());
      await t.core.withdraw(alice.caller, card.id, { amount: 400 });
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 9_500 - 1_055 + 400);
      t.clock.advance(15 * 60_000);
      await t.core.close(alice.caller, card.id);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 9_500 - 55);
    });

    test('a caller without a wallet is refused: wallet not found', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t);
      await assertRefused(t.core.walletBalance({ userId: alice.userId, walletAccountId: 987_654 }), 'WALLET_NOT_FOUND', 'Wallet not found');
    });
  });
}
