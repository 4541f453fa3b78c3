import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from '../../src/core/ledger/ledger.js';
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
              { accountId: revenue, amount: 99, system: true },
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
            { accountId: revenue, amount: 1_001, system: true },
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
              { accountId: revenue, amount: 10, system: true },
            ],
          });
        });
      await post();
      await assert.rejects(post());
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 990);
      assert.deepEqual((await t.admin.checkLedger()).differences, []);
    });

    test('a system account keeps no balance row of its own: its entries are its balance, and a posting to it without `system` fails the journal', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const revenueRow = () =>
        t.database.db.selectFrom('accounts').select('balance').where('code', '=', SYSTEM_ACCOUNTS.revenue).executeTakeFirstOrThrow();
      const before = Number((await revenueRow()).balance);
      const post = (system: boolean, reference: string) =>
        t.database.db.transaction().execute(async (trx) => {
          const revenue = await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
          return postJournal(trx, {
            reference,
            kind: 'test',
            at: t.clock.now().toISOString(),
            postings: [
              { accountId: alice.caller.walletAccountId, amount: -25 },
              system ? { accountId: revenue, amount: 25, system: true } : { accountId: revenue, amount: 25 },
            ],
          });
        });
      const posted = await post(true, 'fee');
      assert.ok(posted);
      assert.deepEqual([...posted.balances.keys()], [alice.caller.walletAccountId], 'only the user account was moved');
      assert.equal(Number((await revenueRow()).balance), before, 'the system row is not touched (no lock on it)');
      await assert.rejects(post(false, 'unflagged'), /would overdraw/);
      assert.equal((await t.core.walletBalance(alice.caller)).balance, 975, 'the failed journal changed nothing');
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0, 'user balances plus system entries sum to zero');
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
