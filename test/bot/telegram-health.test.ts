import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Api, HttpError } from 'grammy';
import { telegramHealth } from '../../src/bot/runtime/telegram-health.js';

/** An Api whose every call gets `answer()` instead of reaching a server. */
function apiAnswering(answer: () => unknown) {
  const api = new Api('123:health-test');
  api.config.use(async () => {
    const value = answer();
    if (value instanceof Error) throw value;
    return value as never;
  });
  return api;
}

test('telegram health: disconnected from a call that could not reach Telegram or that it failed (5xx) until the next answer; a 4xx refusal is an answer', async () => {
  let next: unknown = { ok: true, result: true };
  const api = apiAnswering(() => next);
  const health = telegramHealth();
  api.config.use(health.transformer);
  assert.equal(health.connected(), true);

  await api.deleteMessage(1, 2);
  assert.equal(health.connected(), true);

  next = new HttpError('Network request for deleteMessage failed!', new Error('ECONNREFUSED'));
  await assert.rejects(api.deleteMessage(1, 2), HttpError);
  assert.equal(health.connected(), false, 'the network failed');

  next = { ok: false, error_code: 502, description: 'Bad Gateway' };
  await assert.rejects(api.deleteMessage(1, 2));
  assert.equal(health.connected(), false, 'Telegram failed');

  next = { ok: false, error_code: 400, description: 'Bad Request: message to delete not found' };
  await assert.rejects(api.deleteMessage(1, 2));
  assert.equal(health.connected(), true, 'a refusal is an answer: Telegram is there');

  next = new HttpError('Network request for getUpdates failed!', new Error('ETIMEDOUT'));
  await assert.rejects(api.getUpdates());
  next = { ok: true, result: [] };
  await api.getUpdates();
  assert.equal(health.connected(), true, 'recovered at the next answer');
});
