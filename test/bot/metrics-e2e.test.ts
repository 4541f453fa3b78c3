import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBotMetrics } from '../../src/bot/metrics.js';
import { createLogger } from '../../src/infra/logger.js';
import { type MetricsListener, metricsRegistry, serveMetrics } from '../../src/infra/metrics.js';
import type { ScriptedUser } from '../helpers/bot-api-server.js';
import { catalogue } from '../helpers/core.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import { labelValues, scrape, sampleValue } from '../helpers/metrics.js';
import { eventually } from '../helpers/wait.js';

// The bot's metrics in the process's registry, scraped over HTTP while real Bot API traffic moves them.
// (test/metrics-process.test.ts runs `npm start` with METRICS_PORT: the bot alone, the API alone, both, remote mode.)

const BOT_TOKEN = '123456:METRICS-token';

describe('the bot metrics on /metrics', () => {
  let e2e: E2eBot;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= e2e.stop());
  let listener: MetricsListener;
  let alice: ScriptedUser;
  let token: string;

  const value = async (name: string, labels: Record<string, string> = {}) => sampleValue(await scrape(listener.url), name, labels);
  /** Waits until the metric reads `expected` (what the bot does after its last Bot API call is counted a moment later). */
  const reads = async (name: string, labels: Record<string, string>, expected: number | ((v: number) => boolean)) => {
    let seen: number | undefined;
    const ok = typeof expected === 'number' ? (v: number) => v === expected : expected;
    await eventually(
      `${name}${JSON.stringify(labels)} reads ${String(expected)}`,
      async () => {
        seen = (await value(name, labels)) ?? Number.NaN;
        return ok(seen);
      },
      { seen: () => String(seen) },
    );
  };
  const pendingDeletions = async () =>
    Number(
      (
        await e2e.runtime.database.db
          .withTables<{ bot_pending_deletions: { chat_id: number } }>()
          .selectFrom('bot_pending_deletions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  before(async () => {
    const registry = metricsRegistry();
    e2e = await startE2eBot('bot-metrics', { token: BOT_TOKEN }, { metrics: createBotMetrics(registry) });
    listener = await serveMetrics(registry, '127.0.0.1', 0, createLogger('silent'));
    ({ token } = await e2e.runtime.admin.createUser({ name: 'Alice', deposit: 100_000 }));
    alice = e2e.server.user(7_654_321);
  });
  after(async () => {
    await stop();
    await listener.close();
  });

  it('counts and times updates by type, and names no chat, text or token', async () => {
    const { server } = e2e;
    assert.equal(await value('bot_updates_total', { type: 'message' }), 0);
    const step = alice.send('/start');
    await server.nextMessage(alice.chatId, step.mark, 'API token');
    await reads('bot_updates_total', { type: 'message' }, 1);
    assert.equal(await value('bot_update_duration_seconds_count', { type: 'message' }), 1);
    assert.ok((await value('bot_update_duration_seconds_sum', { type: 'message' }))! > 0);

    alice.edit(step.message, '/start again');
    await reads('bot_updates_total', { type: 'edited_message' }, 1);
    assert.equal(await value('bot_updates_total', { type: 'message' }), 1);
    assert.equal(await value('bot_updates_total', { type: 'callback_query' }), 0);

    const labels = labelValues(await scrape(listener.url)).join('\n');
    for (const secret of [String(alice.chatId), BOT_TOKEN, '123456', '/start']) assert.ok(!labels.includes(secret), `${secret} in a label`);
  });

  it('counts a Bot API call Telegram refuses by method and error code, each attempt', async () => {
    const { server } = e2e;
    server.refuse((method) =>
      method === 'sendMessage' ? { code: 403, description: 'Forbidden: bot was blocked by the user' } : undefined,
    );
    try {
      const step = alice.send('/help');
      await server.waitForCall((c) => c.method === 'sendMessage' && !c.ok, step.mark);
      await reads('bot_telegram_errors_total', { method: 'sendMessage', error_code: '403' }, 1);
    } finally {
      server.refuse();
    }
    // A flood wait that auto-retry waits out is a failed attempt all the same.
    let refused = false;
    server.refuse((method) => {
      if (method !== 'sendMessage' || refused) return undefined;
      refused = true;
      return { code: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 };
    });
    try {
      const step = alice.send('/help');
      await server.waitForCall((c) => c.method === 'sendMessage' && c.ok, step.mark);
      await reads('bot_telegram_errors_total', { method: 'sendMessage', error_code: '429' }, 1);
    } finally {
      server.refuse();
    }
  });

  it('counts pushes by kind as sent or failed, and reads the outbox depth and the pending deletions from the database', async () => {
    const { server, runtime } = e2e;
    const link = alice.send(token);
    await server.nextMessage(alice.chatId, link.mark, 'Linked');
    const caller = await runtime.core.authenticate(token);
    const { bin, plan } = await catalogue(runtime);
    const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: 'Ads' });
    assert.equal(await value('bot_outbox_depth'), 0);

    // The push held up at Telegram: the event waits in the outbox meanwhile.
    server.delay('sendMessage', 1_500);
    let mark = server.mark();
    try {
      const otp = await runtime.admin.simulateOtp(card.id, 2_500, 'Shop');
      await reads('bot_outbox_depth', {}, 1);
      await server.nextMessage(alice.chatId, mark, otp.code);
    } finally {
      server.delay('sendMessage', 0);
    }
    await reads('bot_pushes_total', { kind: 'otp', result: 'sent' }, 1);
    await reads('bot_outbox_depth', {}, 0);
    // The OTP deletes itself in a minute: one deletion pending, as the table says.
    assert.ok((await pendingDeletions()) >= 1);
    await reads('bot_deletions_pending', {}, await pendingDeletions());

    // A card with money on it: its purchases are approved, and each is pushed.
    await runtime.core.topup(caller, card.id, { amount: 5_000 });
    await reads('bot_outbox_depth', {}, 0);
    const approved = (await value('bot_pushes_total', { kind: 'transaction', result: 'sent' }))!;
    // Refused by Telegram: failed, and skipped (the chat blocked the bot).
    server.refuse((method) =>
      method === 'sendMessage' ? { code: 403, description: 'Forbidden: bot was blocked by the user' } : undefined,
    );
    try {
      mark = server.mark();
      await runtime.admin.simulatePurchase(card.id, 100, 'Bakery');
      await server.waitForCall((c) => c.method === 'sendMessage' && !c.ok, mark);
      await reads('bot_pushes_total', { kind: 'transaction', result: 'failed' }, 1);
    } finally {
      server.refuse();
    }
    await reads('bot_outbox_depth', {}, 0);

    await runtime.core.freeze(caller, card.id);
    mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 100, 'Frozen shop');
    await server.nextMessage(alice.chatId, mark, 'Frozen shop');
    await reads('bot_pushes_total', { kind: 'decline', result: 'sent' }, 1);
    assert.equal(await value('bot_pushes_total', { kind: 'transaction', result: 'sent' }), approved);
    assert.equal(await value('bot_pushes_total', { kind: 'decline', result: 'failed' }), 0);
  });

  it('reads the inbox lag: how long the oldest update stored and not yet handled has waited', async () => {
    const { server } = e2e;
    assert.equal(await value('bot_inbox_lag_seconds'), 0);
    // The update's handling waits on Telegram's answer, and the chat's next one waits behind it in the inbox.
    server.delay('sendMessage', 2_500);
    try {
      const step = alice.send('/help');
      await reads('bot_inbox_lag_seconds', {}, (v) => v >= 1);
      await server.nextMessage(alice.chatId, step.mark);
    } finally {
      server.delay('sendMessage', 0);
    }
    await reads('bot_inbox_lag_seconds', {}, 0);
  });

  it('still answers a scrape once the database is closed, the database gauges NaN', async () => {
    await stop();
    const samples = await scrape(listener.url);
    for (const name of ['bot_outbox_depth', 'bot_deletions_pending', 'bot_inbox_lag_seconds'])
      assert.ok(Number.isNaN(sampleValue(samples, name)));
    assert.ok(sampleValue(samples, 'bot_updates_total', { type: 'message' })! >= 1);
  });
});
