import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { startWebhookBot, webhookInbox } from '../../src/bot/runtime/start-webhook.js';
import { createLogger } from '../../src/infra/logger.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { createTestCore } from '../helpers/core.js';
import { createHarness, texts } from './harness.js';
import { textUpdate } from '../helpers/updates.js';

describe('webhook mode', () => {
  it("handles an update only when Telegram's secret-token header matches", async () => {
    const h = await createHarness();
    const app = Fastify();
    const webhook = webhookInbox(h.bot, 'sekret_1');
    app.post('/telegram', webhook.handler);
    const update = textUpdate({ id: 9001 }, '/start');

    const refused = await app.inject({
      method: 'POST',
      url: '/telegram',
      payload: update,
      headers: { 'x-telegram-bot-api-secret-token': 'wrong' },
    });
    assert.equal(refused.statusCode, 401);
    const missing = await app.inject({ method: 'POST', url: '/telegram', payload: update });
    assert.equal(missing.statusCode, 401);
    assert.equal(h.calls.length, 0);

    const accepted = await app.inject({
      method: 'POST',
      url: '/telegram',
      payload: update,
      headers: { 'x-telegram-bot-api-secret-token': 'sekret_1' },
    });
    assert.equal(accepted.statusCode, 200);
    // Answered once stored; handled right after.
    await h.waitFor((c) => c.method === 'sendMessage');
    assert.match(texts(h.calls).join('\n'), /send me your API token/);
    await app.close();
    await webhook.stop();
  });

  it('registers the webhook with its secret token and the command list at start', async () => {
    const server = new BotApiServer();
    const apiRoot = await server.start();
    const t = await createTestCore();
    const config = { token: '1:hook', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60 };
    const running = await startWebhookBot(
      { core: t.core, db: t.database.db, clock: t.clock, logger: createLogger('silent'), config },
      { url: 'https://bot.example/telegram', secretToken: 'sekret_2' },
    );
    try {
      const hook = server.calls.find((c) => c.method === 'setWebhook');
      assert.equal(hook?.payload.url, 'https://bot.example/telegram');
      assert.equal(hook?.payload.secret_token, 'sekret_2');
      assert.ok(server.calls.some((c) => c.method === 'setMyCommands'));
      assert.equal(typeof running.handler, 'function');
    } finally {
      await running.stop();
      await server.stop();
      await t.close();
    }
  });
});
