import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../../src/core/ledger.js';
import { newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

for (const dialect of dialects()) {
  describe(`double-entry ledger (${dialect})`, () => {
    test('an unbalanced journal is rejected before anything is written', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      await assert.rejects(
        t.database.db.transaction().execute(async (trx) => {
          const revenue = await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
          return postJournal(trx, {
            reference: 'bad',
            kind: 'test',
            at: t.clock.now().toISOString(),
            postings: [
              { accountId: alice.caller.walletAccountId, amount: -100 },
              { accountId: revenue, amount: 99 },
            ],
          });
        }),
        /Unbalanced journal/,
      );
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('a journal that would take a user account below zero changes nothing', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const result = await t.database.db.transaction().execute(async (trx) => {
        const revenue = await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
        return postJournal(trx, {
          reference: 'overdraw',
          kind: 'test',
          at: t.clock.now().toISOString(),
          postings: [
            { accountId: alice.caller.walletAccountId, amount: -1_001 },
            { accountId: revenue, amount: 1_001 },
          ],
        });
      });
      assert.equal(result, null);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 1_000);
    });

    test('a journal reference is unique: the same movement cannot be posted twice', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const post = () =>
        t.database.db.transaction().execute(async (trx) => {
          const revenue = await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
          return postJournal(trx, {
            reference: 'once',
            kind: 'test',
            at: t.clock.now().toISOString(),
            postings: [
              { accountId: alice.caller.walletAccountId, amount: -10 },
              { accountId: revenue, amount: 10 },
            ],
          });
        });
      await post();
      await assert.rejects(post());
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 990);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('the ledger check reports a cached balance that differs from its entries', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      await t.database.db.updateTable('accounts').set({ balance: 1_001 }).where('id', '=', alice.caller.walletAccountId).execute();
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, [
        { accountId: alice.caller.walletAccountId, kind: 'wallet', cached: 1_001, fromEntries: 1_000 },
      ]);
    });

    test('the database itself refuses a negative user balance', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      await assert.rejects(
        t.database.db.updateTable('accounts').set({ balance: -1 }).where('id', '=', alice.caller.walletAccountId).execute(),
      );
    });
  });
}
