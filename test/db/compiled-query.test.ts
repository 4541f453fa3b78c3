import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compiledOnce } from '../../src/db/compiled-query.js';
import { newCustomer } from '../helpers/core.js';
import { dialects, useCore } from '../core/dialects.js';

for (const dialect of dialects()) {
  describe(`queries compiled once (${dialect})`, () => {
    test('a query compiled once runs again with new arguments, in and out of a transaction', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000, 'Alice');
      const bob = await newCustomer(t, 2_000, 'Bob');
      const nameOf = compiledOnce(1, (ex, id: string) => ex.selectFrom('users').select('name').where('id', '=', id));
      assert.deepEqual((await nameOf.execute(t.database.db, alice.userId)).rows, [{ name: 'Alice' }]);
      assert.deepEqual((await nameOf.execute(t.database.db, bob.userId)).rows, [{ name: 'Bob' }]);
      const inside = await t.database.db.transaction().execute(async (trx) => (await nameOf.execute(trx, bob.userId)).rows);
      assert.deepEqual(inside, [{ name: 'Bob' }]);
    });

    test('a query is built once per dialect: transactions reuse what the database handle compiled', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000, 'Alice');
      let builds = 0;
      const nameOf = compiledOnce(1, (ex, id: string) => {
        builds += 1;
        return ex.selectFrom('users').select('name').where('id', '=', id);
      });
      await nameOf.execute(t.database.db, alice.userId);
      for (let i = 0; i < 3; i++) await t.database.db.transaction().execute((trx) => nameOf.execute(trx, alice.userId));
      assert.equal(builds, 1);
    });

    test('constants of the query stay bound beside the arguments', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const walletBalance = compiledOnce(1, (ex, id: number) =>
        ex.selectFrom('accounts').select('balance').where('kind', '=', 'wallet').where('id', '=', id),
      );
      assert.equal(Number((await walletBalance.execute(t.database.db, alice.caller.walletAccountId)).rows[0]?.balance), 1_000);
      assert.deepEqual((await walletBalance.execute(t.database.db, 1)).rows, []);
    });

    test('an update compiled once reports the rows it changed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000);
      const rename = compiledOnce(2, (ex, name: string, id: string) => ex.updateTable('users').set({ name }).where('id', '=', id));
      assert.equal((await rename.execute(t.database.db, 'Alicia', alice.userId)).numAffectedRows, 1n);
      assert.equal((await rename.execute(t.database.db, 'Nobody', 'missing')).numAffectedRows, 0n);
    });

    test('a query that does not bind each argument is refused when first compiled', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const unbound = compiledOnce(2, (ex, id: string, _unused: string) => ex.selectFrom('users').select('name').where('id', '=', id));
      await assert.rejects(() => unbound.execute(t.database.db, 'a', 'b'), /does not bind each of its 2 arguments/);
    });

    test('a read outside a transaction never sees what an open transaction has not committed', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000, 'Alice');
      const nameOf = compiledOnce(1, (ex, id: string) => ex.selectFrom('users').select('name').where('id', '=', id));
      let renamed!: () => void;
      const wasRenamed = new Promise<void>((resolve) => (renamed = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const writer = t.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ name: 'Alicia' }).where('id', '=', alice.userId).execute();
        renamed();
        await held;
        throw new Error('rolled back');
      });
      await wasRenamed;
      // Started while the rename is open and uncommitted: it must answer with what is committed.
      const during = nameOf.execute(t.database.db, alice.userId);
      release();
      await assert.rejects(writer, /rolled back/);
      assert.deepEqual((await during).rows, [{ name: 'Alice' }]);
      assert.deepEqual((await nameOf.execute(t.database.db, alice.userId)).rows, [{ name: 'Alice' }]);
    });
  });
}
