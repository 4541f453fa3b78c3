import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Bot, webhookCallback } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import pg from 'pg';
import type { BotContext } from '../src/bot/context.js';
import { createBot } from '../src/bot/index.js';
import { createInbox } from '../src/bot/runtime/inbox.js';
import { inboxWebhookRoute } from '../src/bot/runtime/inbox-webhook.js';
import { type CoreRuntime, startCore } from '../src/app/compose.js';
import { FakeClock } from '../src/infra/clock.js';
import { createLogger } from '../src/infra/logger.js';
import { freshPostgresSchema, whileNoSchemaIsDropped } from '../test/core/dialects.js';

/**
 * Webhook updates per second through the durable inbox (each update stored, answered, then handled by
 * the holder of its chat's lease and marked handled) beside today's plain grammY `webhookCallback`
 * (handled in the request, `sequentialize` per chat in the process), measured in the same run, both
 * through Fastify's `inject` (no sockets), both pressing the Wallet button of the main menu of a linked
 * chat (the link re-checked with the core, one core read, the menu redrawn; API calls stubbed). Two
 * loads: `CHATS` chats with one update each in flight at once (Telegram posts up to 40 at a time), and
 * one update at a time. SQLite is a file (WAL, each commit flushed before it counts, as in production),
 * then in memory (no flush: what the inbox costs besides its two commits per update); Postgres runs
 * too when `BENCH_DATABASE_URL` or `TEST_DATABASE_URL` names one. `BENCH_SECONDS` sets the measuring
 * time of each figure.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CHATS = 16;
const SECRET = 'bench_secret';
const BOT_INFO = {
  id: 1,
  is_bot: true,
  first_name: 'B',
  username: 'b_bot',
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
} as UserFromGetMe;

let updateId = 1;
let messageId = 1;
const userOf = (chat: number) => ({ id: chat, is_bot: false as const, first_name: 'A', language_code: 'en' });
const chatOf = (chat: number) => ({ id: chat, type: 'private' as const, first_name: 'A' });
const text = (chat: number, t: string): Update =>
  ({
    update_id: updateId++,
    message: {
      message_id: messageId++,
      date: 0,
      chat: chatOf(chat),
      from: userOf(chat),
      text: t,
      ...(t.startsWith('/') ? { entities: [{ type: 'bot_command', offset: 0, length: t.split(' ')[0]!.length }] } : {}),
    },
  }) as Update;
const press = (chat: number, data: string): Update =>
  ({
    update_id: updateId++,
    callback_query: {
      id: String(updateId),
      from: userOf(chat),
      chat_instance: '1',
      data,
      message: { message_id: 1, date: 0, chat: chatOf(chat), from: BOT_INFO, text: 'x' },
    },
  }) as Update;

/** The bot over the runtime with its API calls answered at once; `keyboard` keeps the last inline keyboard sent. */
function benchBot(runtime: CoreRuntime, clock: FakeClock, sequentialize: boolean, keyboard: { data?: string[] } = {}) {
  const bot = createBot(
    {
      core: runtime.core,
      db: runtime.database.db,
      clock,
      logger: createLogger('silent'),
      config: { token: '1:bench', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false },
    },
    { botInfo: BOT_INFO, sequentialize },
  );
  bot.api.config.use(async (_prev, method, payload: any) => {
    const buttons = payload?.reply_markup?.inline_keyboard as { callback_data: string }[][] | undefined;
    if (buttons) keyboard.data = buttons.flat().map((b) => b.callback_data);
    const result =
      method === 'sendMessage' || method === 'editMessageText'
        ? { message_id: messageId++, date: 0, chat: chatOf(Number(payload.chat_id)), text: payload.text }
        : true;
    return { ok: true, result } as never;
  });
  return bot;
}

/** Posts an update as Telegram would. */
const post = (app: FastifyInstance, update: Update) =>
  app.inject({ method: 'POST', url: '/hook', payload: update, headers: { 'x-telegram-bot-api-secret-token': SECRET } });

interface Webhook {
  /** Posts the updates at once and resolves once all are handled. */
  deliver(updates: Update[]): Promise<void>;
  close(): Promise<void>;
}

function plainWebhook(bot: Bot<BotContext>): Webhook {
  const app = Fastify();
  app.post('/hook', webhookCallback(bot, 'fastify', { secretToken: SECRET, onTimeout: 'return' }));
  return {
    async deliver(updates) {
      await Promise.all(updates.map((u) => post(app, u)));
    },
    close: () => app.close(),
  };
}

/** An inbox over the runtime's database handing updates to `bot`; `expect(n)` resolves once `n` more are handled. */
function countingInbox(bot: Bot<BotContext>, runtime: CoreRuntime, clock: FakeClock) {
  let handled = 0;
  let waiting: { count: number; resolve: () => void } | undefined;
  const inbox = createInbox({
    db: runtime.database.db,
    clock,
    logger: createLogger('silent'),
    handle: async (update) => {
      await bot.handleUpdate(update);
      handled++;
      if (waiting && handled >= waiting.count) waiting.resolve();
    },
  });
  const expect = (n: number) =>
    new Promise<void>((resolve) => {
      waiting = { count: handled + n, resolve };
    });
  return { inbox, expect };
}

function inboxWebhook(bot: Bot<BotContext>, runtime: CoreRuntime, clock: FakeClock): Webhook {
  const { inbox, expect } = countingInbox(bot, runtime, clock);
  const app = Fastify();
  app.post('/hook', inboxWebhookRoute(inbox, SECRET));
  return {
    async deliver(updates) {
      const done = expect(updates.length);
      await Promise.all(updates.map((u) => post(app, u)));
      await done;
    },
    async close() {
      await app.close();
      await inbox.stop();
    },
  };
}

/**
 * Polling as @grammyjs/runner did it: a fetched batch handed to `handleUpdate` at once (sequentialized per
 * chat in the process), nothing stored. The baseline of the durable polling below.
 */
function runnerPolling(bot: Bot<BotContext>): Webhook {
  return {
    async deliver(updates) {
      await Promise.all(updates.map((u) => bot.handleUpdate(u)));
    },
    close: async () => {},
  };
}

/** Durable polling (src/bot/runtime/polling.ts): a fetched batch stored in the inbox in one commit, then handled from there. */
function durablePolling(bot: Bot<BotContext>, runtime: CoreRuntime, clock: FakeClock): Webhook {
  const { inbox, expect } = countingInbox(bot, runtime, clock);
  return {
    async deliver(updates) {
      const done = expect(updates.length);
      await inbox.receiveAll(updates);
      await done;
    },
    close: () => inbox.stop(),
  };
}

/**
 * Updates per second through each webhook, delivering `updates()` at a time, measured in turns of short
 * slices so that load from elsewhere hits both alike.
 */
async function compare(
  label: string,
  inbox: Webhook,
  plain: Webhook,
  updates: () => Update[],
  names = { mine: 'inbox', base: 'webhookCallback' },
): Promise<void> {
  const turn = async (webhook: Webhook) => {
    const batch = updates();
    await webhook.deliver(batch);
    return batch.length;
  };
  for (const webhook of [inbox, plain, inbox, plain]) {
    const started = performance.now();
    while (performance.now() - started < 300) await turn(webhook);
  }
  const totals = new Map([inbox, plain].map((webhook) => [webhook, { n: 0, ms: 0 }]));
  const slice = (SECONDS * 1000) / 20;
  for (let round = 0; round < 10; round++) {
    for (const [webhook, total] of totals) {
      const started = performance.now();
      while (performance.now() - started < slice) total.n += await turn(webhook);
      total.ms += performance.now() - started;
    }
  }
  const rate = (webhook: Webhook) => totals.get(webhook)!.n / (totals.get(webhook)!.ms / 1000);
  const fmt = (v: number) => Math.round(v).toLocaleString('en-US').padStart(7);
  const [mine, base] = [rate(inbox), rate(plain)];
  console.log(
    `${label.padEnd(40)} ${names.mine} ${fmt(mine)} updates/s   ${names.base} ${fmt(base)} updates/s   ratio ${((mine / base) * 100).toFixed(1)}%`,
  );
}

async function measure(dialect: string, databaseUrl: string, migrating = <T>(run: () => Promise<T>) => run()): Promise<void> {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const runtime = await migrating(() => startCore({ databaseUrl, cardDataKey: Buffer.alloc(32, 7), clock }));
  try {
    const { token } = await runtime.admin.createUser({ name: 'Bench', deposit: 100_000 });
    const keyboard: { data?: string[] } = {};
    const plainBot = benchBot(runtime, clock, true, keyboard);
    const inboxBot = benchBot(runtime, clock, false);
    const chats = Array.from({ length: CHATS }, (_, i) => 5_000 + i);
    for (const chat of chats) await plainBot.handleUpdate(text(chat, `/link ${token}`));
    await plainBot.handleUpdate(text(chats[0]!, '/menu'));
    const wallet = keyboard.data![0]!;

    const plain = plainWebhook(plainBot);
    const inbox = inboxWebhook(inboxBot, runtime, clock);
    try {
      await compare(`${dialect}: ${CHATS} chats at once`, inbox, plain, () => chats.map((chat) => press(chat, wallet)));
      await compare(`${dialect}: one update at a time`, inbox, plain, () => [press(chats[0]!, wallet)]);
    } finally {
      await inbox.close();
      await plain.close();
    }
    // Polling: a batch of one update per chat, as getUpdates returns it.
    const durable = durablePolling(inboxBot, runtime, clock);
    const runner = runnerPolling(plainBot);
    try {
      await compare(`${dialect}: polled batch of ${CHATS} chats`, durable, runner, () => chats.map((chat) => press(chat, wallet)), {
        mine: 'durable',
        base: 'runner',
      });
    } finally {
      await durable.close();
    }
  } finally {
    await runtime.close();
  }
}

async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'inbox-bench-'));
  try {
    await measure('SQLite file', path.join(dir, 'cards.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Without the flushes: what the inbox costs besides durability.
  await measure('SQLite in memory', ':memory:');
  const postgres = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!postgres?.startsWith('postgres') || !(await postgresReachable(postgres))) {
    console.log('Postgres: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
    return;
  }
  const schema = await freshPostgresSchema(postgres);
  try {
    // Test processes may be dropping their schemas meanwhile (see test/core/dialects.ts).
    await measure('Postgres', schema.url, (run) => whileNoSchemaIsDropped(postgres, run));
  } finally {
    await schema.drop();
  }
}
