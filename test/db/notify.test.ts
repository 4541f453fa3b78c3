import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { listenForNotifications, notifyOnCommit } from '../../src/db/notify.js';
import { capturedLogger } from '../helpers/log.js';
import { eventually } from '../helpers/wait.js';
import { withoutPostgres } from '../core/dialects.js';

// The Postgres notifications that wake the bot's push (src/db/notify.ts): sent at commit, heard by a
// connection of its own that comes back when it drops.

const url = process.env.TEST_DATABASE_URL;

describe('Postgres notifications', { skip: withoutPostgres }, () => {
  test('a notification made in a transaction is heard once it commits, never if it rolls back', async (ctx) => {
    const channel = `test_${randomUUID().replaceAll('-', '')}`;
    let heard = 0;
    const listener = listenForNotifications({ url: url!, channel, onNotify: () => heard++ });
    ctx.after(() => listener.close());
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) });
    ctx.after(() => db.destroy());
    await listener.ready;
    await eventually('the call made once listening (what was announced meanwhile)', () => heard === 1, { everyMs: 10 });

    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await notifyOnCommit(trx, channel);
        throw new Error('rolled back');
      }),
    );
    let inTransaction = false;
    await db.transaction().execute(async (trx) => {
      await notifyOnCommit(trx, channel);
      await notifyOnCommit(trx, channel);
      await new Promise((resolve) => setTimeout(resolve, 100));
      inTransaction = heard === 1;
    });
    assert.ok(inTransaction, 'nothing heard before the commit');
    await eventually('the commit is heard', () => heard === 2, { everyMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(heard, 2, 'heard once for the transaction, nothing for the one rolled back');
  });

  test('a listening connection that drops is opened again; the drop and the return are logged once each', async (ctx) => {
    const channel = `test_${randomUUID().replaceAll('-', '')}`;
    const { logger, text } = capturedLogger('info');
    let heard = 0;
    const listener = listenForNotifications({ url: url!, channel, onNotify: () => heard++, logger, minBackoffMs: 20 });
    ctx.after(() => listener.close());
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    ctx.after(() => admin.end());
    await listener.ready;
    const listening = async () =>
      (await admin.query<{ pid: number }>('select pid from pg_stat_activity where query = $1', [`listen "${channel}"`])).rows.map(
        (r) => r.pid,
      );
    await eventually('the listener shows', async () => (await listening()).length === 1, { everyMs: 10 });
    const [first] = await listening();

    await admin.query('select pg_terminate_backend($1)', [first]);
    await eventually('a new connection listens', async () => (await listening()).some((pid) => pid !== first), { everyMs: 10 });
    const before = heard;
    await admin.query('select pg_notify($1, current_schema())', [channel]);
    await eventually('a notification is heard on the new connection', () => heard > before, { everyMs: 10 });

    const lines = text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['listening for database notifications failed; reconnecting (polling meanwhile)', 'listening for database notifications again'],
    );
  });
});
