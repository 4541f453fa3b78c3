import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { webhookHandler } from '../../src/bot/index.js';
import { createHarness, texts } from './harness.js';
import { textUpdate } from '../helpers/updates.js';

describe('webhook mode', () => {
  it("handles an update only when Telegram's secret-token header matches", async () => {
    const h = await createHarness();
    const app = Fastify();
    app.post('/telegram', webhookHandler(h.bot, 'sekret_1'));
    const update = textUpdate({ id: 9001 }, '/start');

    const refused = await app.inject({ method: 'POST', url: '/telegram', payload: update, headers: { 'x-telegram-bot-api-secret-token': 'wrong' } });
    assert.equal(refused.statusCode, 401);
    const missing = await app.inject({ method: 'POST', url: '/telegram', payload: update });
    assert.equal(missing.statusCode, 401);
    assert.equal(h.calls.length, 0);

    const accepted = await app.inject({ method: 'POST', url: '/telegram', payload: update, headers: { 'x-telegram-bot-api-secret-token': 'sekret_1' } });
    assert.equal(accepted.statusCode, 200);
    assert.match(texts(h.calls).join('\n'), /send me your API token/);
    await app.close();
  });
});
