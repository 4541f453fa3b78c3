import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import { createLogger } from '../../src/infra/logger.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { createTestCore } from '../helpers/core.js';

test('stopping the polling bot finishes the update in flight before it returns', async () => {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const t = await createTestCore();
  const running = await startBot({
    core: t.core,
    db: t.database.db,
    clock: t.clock,
    logger: createLogger('silent'),
    config: { token: '1:stop', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false, pollIntervalMs: 50 },
  });
  let entered!: () => void;
  const inFlight = new Promise<void>((resolve) => (entered = resolve));
  // The reply to /start is held back for a while: the update is in flight when the stop begins.
  running.bot.api.config.use(async (prev, method, payload, signal) => {
    if (method === 'sendMessage') {
      entered();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return prev(method, payload, signal);
  });
  try {
    const user = server.user(7001);
    const { mark } = user.send('/start');
    await inFlight;
    await running.stop();
    const reply = server.calls.slice(mark).find((c) => c.method === 'sendMessage');
    assert.ok(reply, 'the reply was sent before stop() returned');
    assert.match(reply.payload.text, /API token/);
  } finally {
    await server.stop();
    await t.close();
  }
});
