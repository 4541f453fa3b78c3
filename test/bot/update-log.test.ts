import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBot } from '../../src/bot/index.js';
import { capturedLogger } from '../helpers/log.js';
import { createTestCore } from '../helpers/core.js';
import { BOT_INFO, callbackUpdate, channelPostUpdate, textUpdate } from '../helpers/updates.js';
import { createHarness } from './harness.js';

type Line = { level: number; msg: string; updateId?: number; updateType?: string; chatId?: number };

test('the bot logs each update type and chat id at debug', async (ctx) => {
  const h = await createHarness();
  ctx.after(() => h.t.close());
  const message = textUpdate({ id: 4101 }, 'hello there');
  const press = callbackUpdate({ id: 4102 }, 'nothing');
  const post = channelPostUpdate(-100_4103, 'news');
  for (const update of [message, press, post]) await h.send(update);
  const lines = h
    .log()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.msg === 'update');
  assert.deepEqual(
    lines.map((l) => [l.level, l.updateId, l.updateType, l.chatId]),
    [
      [20, message.update_id, 'message', 4101],
      [20, press.update_id, 'callback_query', 4102],
      [20, post.update_id, 'channel_post', -100_4103],
    ],
  );
  assert.ok(!h.log().includes('hello there'), 'nothing of the content is logged');

  // At info, nothing of it.
  const t = await createTestCore();
  ctx.after(() => t.close());
  const quiet = capturedLogger('info');
  const bot = createBot(
    {
      core: t.core,
      db: t.database.db,
      clock: t.clock,
      logger: quiet.logger,
      config: { token: '1:test', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false },
    },
    { botInfo: BOT_INFO, fetch: (async () => new Response(JSON.stringify({ ok: true, result: true }))) as typeof fetch },
  );
  await bot.handleUpdate(textUpdate({ id: 4104, groupId: -4104 }, 'hi'));
  assert.ok(!quiet.text().includes('"msg":"update"'));
});
