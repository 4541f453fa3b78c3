import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GrammyError, HttpError } from 'grammy';
import { loggableError } from '../src/log-safe.js';

test('a loggable error keeps no request URL (bot token) and no request payload (card data, secrets)', () => {
  const token = '123456:SECRET-token';
  const network = new HttpError("Network request for 'getMe' failed!", new Error(`request to https://api.telegram.org/bot${token}/getMe failed, reason: ECONNREFUSED`));
  const refused = new GrammyError("Call to 'setWebhook' failed!", { ok: false, error_code: 400, description: 'Bad Request' }, 'setWebhook', {
    url: 'https://bot.example/hook',
    secret_token: 'hook-secret',
  });
  const text = JSON.stringify([loggableError(network), loggableError(refused)]);
  assert.ok(!text.includes('SECRET-token'), text);
  assert.ok(!text.includes('hook-secret'), text);
  assert.match(text, /Network request for 'getMe' failed!/);
  assert.match(text, /"method":"setWebhook"/);
});
