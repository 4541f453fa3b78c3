import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createHttpServer } from '../../src/api/server.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore } from '../helpers/core.js';
import { startTestApi } from '../helpers/http.js';

const roomy = { perTokenPerMinute: 1000, perAddressPerMinute: 1000, authFailuresPerAddress: 1000 };

test('/readyz is 200 without a token when the database answers, no migration is pending and the bot reached Telegram; else 503 naming the failing check', async (ctx) => {
  let botReady = false;
  const api = await startTestApi({ server: { botReady: () => botReady, limits: { ...roomy, perAddressPerMinute: 6 } } });
  ctx.after(() => api.close());

  const starting = await api.call('GET', '/readyz');
  assert.equal(starting.status, 503, starting.text);
  assert.equal(starting.body.success, false);
  assert.deepEqual(starting.body.data, { status: 'not_ready', checks: { database: 'ok', migrations: 'ok', bot: 'failing' } });

  botReady = true;
  const ready = await api.call('GET', '/readyz');
  assert.equal(ready.status, 200, ready.text);
  assert.deepEqual(ready.body.data, { status: 'ready', checks: { database: 'ok', migrations: 'ok', bot: 'ok' } });
  assert.equal(ready.body.success, true);

  // Rate-limited per address like /livez: 6 a minute here, 2 used.
  for (let i = 0; i < 4; i++) await api.call('GET', '/readyz');
  assert.equal((await api.call('GET', '/readyz')).status, 429);
});

test('/readyz: a pending migration or a database that does not answer is 503; no bot in the process is "disabled"', async (ctx) => {
  const t = await createTestCore();
  ctx.after(() => t.close());
  const app = createHttpServer({ core: t.core, db: t.database.db, clock: t.clock, logger: createLogger('silent') });
  ctx.after(() => app.close());
  const ok = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json().data.checks, { database: 'ok', migrations: 'ok', bot: 'disabled' });

  const pendingCore = await createTestCore();
  await sql`delete from kysely_migration where name = (select max(name) from kysely_migration)`.execute(pendingCore.database.db);
  const pendingApp = createHttpServer({
    core: pendingCore.core,
    db: pendingCore.database.db,
    clock: pendingCore.clock,
    logger: createLogger('silent'),
  });
  const pending = await pendingApp.inject({ method: 'GET', url: '/readyz' });
  assert.equal(pending.statusCode, 503);
  assert.deepEqual(pending.json().data.checks, { database: 'ok', migrations: 'pending', bot: 'disabled' });

  await pendingCore.close();
  const down = await pendingApp.inject({ method: 'GET', url: '/readyz' });
  assert.equal(down.statusCode, 503);
  assert.equal(down.json().data.checks.database, 'failing');
  await pendingApp.close();
});
