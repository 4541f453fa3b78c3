import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import type { BotDeps } from '../../src/bot/services.js';
import { takePollingLease, PollerTakenError } from '../../src/bot/runtime/poller-lease.js';
import { botTables } from '../../src/bot/store/tables.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { createTestCore, type TestCore } from '../helpers/core.js';
import { capturedLogger } from '../helpers/log.js';

const depsFor = (t: TestCore, apiRoot: string): BotDeps => ({
  core: t.core,
  db: t.database.db,
  clock: t.clock,
  logger: capturedLogger('info').logger,
  config: {
    token: '1:poller',
    apiRoot,
    sensitiveTtlSeconds: 60,
    otpTtlSeconds: 60,
    pollIntervalMs: 50,
    rateLimit: false,
    pollerLeaseMs: 300,
  },
});

test('a second polling instance on the same database is refused with a clear error; the first one polls on', async () => {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const t = await createTestCore();
  try {
    const first = await startBot(depsFor(t, apiRoot));
    const started = Date.now();
    await assert.rejects(
      startBot(depsFor(t, apiRoot)),
      (error: unknown) => error instanceof PollerTakenError && /BOT_MODE=webhook/.test(error.message),
    );
    assert.ok(Date.now() - started >= 300, 'it waited for the lease to lapse before refusing');
    // The first still answers its users.
    const user = server.user(8801);
    const step = user.send('/start');
    await server.nextMessage(user.chatId, step.mark, 'API token');
    await first.stop();
    // Once the first has stopped, a new poller starts at once.
    const next = await startBot(depsFor(t, apiRoot));
    await next.stop();
  } finally {
    await server.stop();
    await t.close();
  }
});

test('the lease of a poller that died lapses: the next start takes it over', async () => {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const t = await createTestCore();
  try {
    const died = new Date(t.clock.now().getTime() - 60_000).toISOString();
    await t.database.db
      .withTables<{ bot_kv: { key: string; value: string; updated_at: string } }>()
      .insertInto('bot_kv')
      .values({ key: 'bot:poller', value: 'a-dead-process', updated_at: died })
      .execute();
    const running = await startBot(depsFor(t, apiRoot));
    await running.stop();
  } finally {
    await server.stop();
    await t.close();
  }
});

test('a poller that must wait says so at once, with how long it will wait (waitSeconds)', async () => {
  const t = await createTestCore();
  const db = botTables(t.database.db);
  const leaseMs = 3_000;
  const holder = await takePollingLease(db, t.clock, capturedLogger('info').logger, leaseMs);
  const log = capturedLogger('info');
  const started = Date.now();
  let settled = false;
  const waiting = takePollingLease(db, t.clock, log.logger, leaseMs).finally(() => {
    settled = true;
  });
  try {
    const said = () =>
      log
        .text()
        .split('\n')
        .filter((line) => line.includes('waiting for it to lapse'));
    while (said().length === 0 && Date.now() - started < leaseMs) await new Promise((resolve) => setTimeout(resolve, 10));
    const elapsed = Date.now() - started;
    // Before its first retry (a third of the lease), long before the wait ends (the lease and a third).
    assert.ok(elapsed < leaseMs / 3, `logged after ${elapsed} ms`);
    assert.equal(settled, false, 'logged while still waiting');
    const [line] = said().map((l) => JSON.parse(l) as { msg: string; waitSeconds: number });
    assert.deepEqual(line, {
      ...line,
      msg: 'another process holds the polling lease (or held it when it stopped); waiting for it to lapse',
      waitSeconds: Math.ceil((leaseMs + leaseMs / 3) / 1000),
    });
  } finally {
    await holder.release();
    // Released: the waiting poller takes the lease on its next try.
    await (await waiting).release();
    await t.close();
  }
});
