import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { compiledOnce } from '../../src/db/compiled-query.js';
import { preparable, preparedName } from '../../src/db/prepared-statements.js';
import { useCore, withoutPostgres } from '../core/dialects.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { queriesSent } from '../helpers/queries.js';

describe('which statements are prepared', () => {
  test('a statement that names its columns is preparable', () => {
    assert.ok(preparable('select "name" from "users" where "id" = $1'));
    assert.ok(preparable('select ($1::bigint * f.percent_bps + 5000) / 10000 as fee from platform_fees f'));
    assert.ok(preparable('update cards set deposit = deposit + $1 where id = $2 returning id, deposit'));
  });

  test('one that returns every column is not: a migration adding a column would change its result type', () => {
    assert.ok(!preparable('select * from "users" where "id" = $1'));
    assert.ok(!preparable('select "cards".* from "cards"'));
    assert.ok(!preparable('select "cards". * from "cards"'));
    assert.ok(!preparable('update "cards" set "name" = $1 returning *'));
    assert.ok(!preparable('select "id", * from "cards"'));
    assert.ok(!preparable('SELECT DISTINCT * FROM cards'));
    assert.ok(!preparable('select distinct on ("user_id") * from "cards"'));
    assert.ok(!preparable('select all * from "cards"'));
    assert.ok(!preparable('select /* every column */ * from "cards"'));
    assert.ok(!preparable('table cards'));
  });
});

describe('prepared statements on Postgres', { skip: withoutPostgres }, () => {
  test('a query compiled once runs as a named statement, parsed once per connection', async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 1_000, 'Alice');
    const nameOf = compiledOnce(1, (ex, id: string) => ex.selectFrom('users').select('name').where('id', '=', id));
    const prepared = await t.database.db.connection().execute(async (conn) => {
      for (let i = 0; i < 3; i++) assert.deepEqual((await nameOf.execute(conn, alice.userId)).rows, [{ name: 'Alice' }]);
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(conn);
      return rows;
    });
    const mine = prepared.filter((row) => row.statement.includes('from "users"') && row.statement.includes('"name"'));
    assert.equal(mine.length, 1, JSON.stringify(prepared));
    assert.equal(mine[0]?.name, preparedName(mine[0]!.statement));
  });

  test('one that selects every column is sent unnamed, and still runs after a migration adds a column', async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 1_000, 'Alice');
    const everything = compiledOnce(1, (ex, id: string) => ex.selectFrom('users').selectAll().where('id', '=', id));
    const named = compiledOnce(1, (ex, id: string) => ex.selectFrom('users').select(['id', 'name']).where('id', '=', id));
    await t.database.db.connection().execute(async (conn) => {
      assert.equal((await everything.execute(conn, alice.userId)).rows[0]?.name, 'Alice');
      assert.equal((await named.execute(conn, alice.userId)).rows[0]?.name, 'Alice');
      await sql`alter table users add column prepared_probe integer`.execute(conn);
      const after = (await everything.execute(conn, alice.userId)).rows[0] as Record<string, unknown>;
      assert.ok('prepared_probe' in after);
      assert.deepEqual((await named.execute(conn, alice.userId)).rows, [{ id: alice.userId, name: 'Alice' }]);
    });
  });

  test('the money statements are prepared: top-ups run again and again with exact balances', async (ctx) => {
    const t = await useCore(ctx, 'postgres', { settings: { topupCooldownSeconds: 1 } });
    const alice = await newCustomer(t, 50_000);
    const card = await newCard(t, alice);
    let last = await t.core.topup(alice.caller, card.id, { amount: 1_000 });
    const { queries } = await queriesSent(async () => {
      for (let i = 0; i < 12; i++) {
        t.clock.advance(2_000);
        const next = await t.core.topup(alice.caller, card.id, { amount: 1_000 });
        assert.equal(next.newCardBalance, last.newCardBalance + 1_000);
        assert.equal(next.walletBalance, last.walletBalance - next.totalCharged);
        last = next;
      }
    });
    const names = queries.map((query) => query.name);
    assert.equal(names.length, 12);
    assert.ok(
      names.every((name) => name !== undefined && name === names[0]),
      `each top-up one named statement: ${names}`,
    );
  });
});
