import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBot } from '../../src/bot/index.js';
import type { InboxTables } from '../../src/bot/runtime/inbox-store.js';
import { createBotMetrics } from '../../src/bot/metrics.js';
import { botTables } from '../../src/bot/store/tables.js';
import { scheduleDeletion } from '../../src/bot/store/pending-deletions.js';
import { createLogger } from '../../src/infra/logger.js';
import { metricsRegistry, serveMetrics } from '../../src/infra/metrics.js';
import { dialects, useCore } from '../core/dialects.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { scrape, sampleValue } from '../helpers/metrics.js';
import { BOT_INFO } from '../helpers/updates.js';

// The gauges /metrics reads from the database at scrape time, on each dialect: what waits in the outbox,
// the deletions pending, and how long the oldest unhandled update has waited in the inbox.

for (const dialect of dialects()) {
  describe(`the bot's database gauges (${dialect})`, () => {
    test('read what the tables hold when scraped', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const registry = metricsRegistry();
      const logger = createLogger('silent');
      const config = { token: '1:test', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: 60, otpTtlSeconds: 60 };
      createBot(
        { core: t.core, db: t.database.db, clock: t.clock, logger, config, metrics: createBotMetrics(registry) },
        { botInfo: BOT_INFO },
      );
      const listener = await serveMetrics(registry, '127.0.0.1', 0, logger);
      ctx.after(() => listener.close());
      const gauges = async () => {
        const samples = await scrape(listener.url);
        return ['bot_outbox_depth', 'bot_deletions_pending', 'bot_inbox_lag_seconds'].map((name) => sampleValue(samples, name));
      };
      assert.deepEqual(await gauges(), [0, 0, 0]);

      // No background jobs run: the events wait.
      const card = await newCard(t, await newCustomer(t));
      for (let i = 0; i < 3; i++) await t.admin.simulateOtp(card.id, 100, `Shop ${i}`);
      const waiting = (await t.core.events.pending()).length;
      assert.ok(waiting >= 3);
      const db = botTables(t.database.db);
      const now = t.clock.now().getTime();
      await scheduleDeletion(db, 501, 1, new Date(now + 60_000));
      await scheduleDeletion(db, 501, 2, new Date(now - 1_000));
      const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000).toISOString();
      await t.database.db
        .withTables<InboxTables>()
        .insertInto('bot_updates')
        .values([
          { update_id: 1, chat_key: 'chat:501', payload: '', received_at: at(100), handled_at: at(99) },
          { update_id: 2, chat_key: 'chat:501', payload: '{}', received_at: at(42), handled_at: null },
          { update_id: 3, chat_key: 'chat:502', payload: '{}', received_at: at(5), handled_at: null },
        ])
        .execute();
      assert.deepEqual(await gauges(), [waiting, 2, 42]);
    });
  });
}
