import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { createTestCore } from '../helpers/core.js';
import { capturedLogger } from '../helpers/log.js';

test('a start that waits for Telegram says so in the log, then starts once Telegram answers', async () => {
  const server = new BotApiServer();
  server.delay('getMe', 500);
  const apiRoot = await server.start();
  const t = await createTestCore();
  const { logger, text } = capturedLogger('info');
  try {
    const running = await startBot({
      core: t.core,
      db: t.database.db,
      clock: t.clock,
      logger,
      config: { token: '1:slow', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, pollIntervalMs: 50, slowStartNoticeMs: 100 },
    });
    await running.stop();
    const log = text();
    const lines = log
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; apiHost?: string });
    const notice = lines.findIndex((l) => /Telegram has not answered yet/.test(l.msg));
    assert.ok(notice >= 0, 'the wait was logged');
    assert.equal(lines[notice]!.apiHost, new URL(apiRoot).host);
    assert.ok(lines.findIndex((l) => l.msg === 'bot polling') > notice, 'then the bot started');
    assert.doesNotMatch(log, /1:slow/, 'without the token');
  } finally {
    await server.stop();
    await t.close();
  }
});
