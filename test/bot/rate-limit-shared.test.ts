import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Update } from 'grammy/types';
import { createBot } from '../../src/bot/index.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore } from '../helpers/core.js';
import { redisUnavailable, testRedis } from '../helpers/redis.js';
import { BOT_INFO, textUpdate } from '../helpers/updates.js';

// Several bot instances (webhook mode) on one database and one Redis: each user's flood limit is one count.

const SLOW_DOWN = 'Too many messages; slow down a little.';

describe('with REDIS_URL, several bot instances hold the per-user limit together', { skip: redisUnavailable }, () => {
  test("one user's updates split across two bots are cut off once their sum passes the limit, on both; other users go on", async (t) => {
    const runtime = await createTestCore();
    const redis = testRedis();
    t.after(async () => {
      await redis.cleanUp();
      await runtime.close();
    });
    const sent: { bot: string; chatId: number; text: string }[] = [];
    const bots = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const fakeFetch = async (_url: string | URL | Request, init?: RequestInit) => {
          const payload = JSON.parse(String(init?.body ?? '{}')) as { chat_id?: number; text?: string };
          if (payload.text !== undefined) sent.push({ bot: name, chatId: Number(payload.chat_id), text: payload.text });
          const result = {
            message_id: sent.length,
            date: 1_700_000_000,
            chat: { id: payload.chat_id, type: 'private' },
            text: payload.text,
          };
          return new Response(JSON.stringify({ ok: true, result }), { headers: { 'content-type': 'application/json' } });
        };
        return createBot(
          {
            core: runtime.core,
            db: runtime.database.db,
            clock: runtime.clock,
            logger: createLogger('silent'),
            redis: await redis.connect(),
            config: {
              token: '1:test',
              apiRoot: 'http://127.0.0.1:9',
              sensitiveTtlSeconds: 60,
              otpTtlSeconds: 60,
              rateLimit: { timeFrameMs: 60_000, limit: 3 },
            },
          },
          { botInfo: BOT_INFO, fetch: fakeFetch as typeof fetch },
        );
      }),
    );
    const [a, b] = bots;
    const from = (bot: typeof a, chatId: number, update: Update = textUpdate({ id: chatId }, '/help')) => bot!.handleUpdate(update);

    for (const bot of [a, b, a]) await from(bot, 5101);
    assert.equal(sent.filter((m) => m.chatId === 5101).length, 3, 'three answered');
    assert.ok(!sent.some((m) => m.text === SLOW_DOWN));

    // The fourth, on the bot that has seen one: told once to slow down, then nothing more from either.
    await from(b, 5101);
    assert.deepEqual(sent.at(-1), { bot: 'b', chatId: 5101, text: SLOW_DOWN });
    const before = sent.length;
    await from(a, 5101);
    await from(b, 5101);
    assert.equal(sent.length, before, 'past the limit the updates are dropped, on both bots');

    // Another user is counted apart.
    await from(a, 5102);
    await from(b, 5102);
    assert.deepEqual(
      sent.slice(before).map((m) => [m.bot, m.chatId, m.text === SLOW_DOWN]),
      [
        ['a', 5102, false],
        ['b', 5102, false],
      ],
    );
  });
});
