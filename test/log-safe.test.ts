import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GrammyError, HttpError } from 'grammy';
import { loggableError } from '../src/infra/log-safe.js';

test('a loggable error keeps no request URL (bot token) and no request payload (card data, secrets)', () => {
  const token = '123456:SECRET-token';
  const network = new HttpError(
    "Network request for 'getMe' failed!",
    new Error(`request to https://api.telegram.org/bot${token}/getMe failed, reason: ECONNREFUSED`),
  );
  const refused = new GrammyError(
    "Call to 'setWebhook' failed!",
    { ok: false, error_code: 400, description: 'Bad Request' },
    'setWebhook',
    {
      url: 'https://bot.example/hook',
      secret_token: 'hook-secret',
    },
  );
  const text = JSON.stringify([loggableError(network), loggableError(refused)]);
  assert.ok(!text.includes('SECRET-token'), text);
  assert.ok(!text.includes('hook-secret'), text);
  assert.match(text, /Network request for 'getMe' failed!/);
  assert.match(text, /"method":"setWebhook"/);
});

test('no secret in logs, by construction: a raw error logged under err passes the one serializer', async () => {
  const { capturedLogger } = await import('./helpers/log.js');
  const { logger, text } = capturedLogger('debug');
  const refused = new GrammyError(
    "Call to 'sendMessage' failed!",
    { ok: false, error_code: 400, description: 'Bad Request' },
    'sendMessage',
    {
      chat_id: 1,
      text: 'PAN 4242424242424242 CVV 123',
    },
  );
  const network = new HttpError(
    "Network request for 'getMe' failed!",
    new Error('request to https://api.telegram.org/bot123456:SECRET-token/getMe failed'),
  );
  logger.error({ err: refused }, 'raw grammY error');
  logger.error({ err: network }, 'raw network error');
  logger.error({ err: { payload: { pan: '4242424242424242' }, token: 'vc_abc' } }, 'a plain object as an error');
  logger.error(refused, 'an error as the first argument');
  const out = text();
  for (const secret of ['4242424242424242', 'SECRET-token', 'vc_abc', 'CVV 123']) assert.ok(!out.includes(secret), `${secret} in ${out}`);
  assert.match(out, /"method":"sendMessage"/);
  assert.equal(out.trim().split('\n').length, 4);
});
