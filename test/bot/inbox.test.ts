import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Update } from 'grammy/types';
import { createBot } from '../../src/bot/index.js';
import type { CardsBot } from '../../src/bot/runtime/cards-bot.js';
import { createInbox, type Inbox } from '../../src/bot/runtime/inbox.js';
import type { InboxTables } from '../../src/bot/runtime/inbox-store.js';
import { inboxWebhookRoute } from '../../src/bot/runtime/inbox-webhook.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import type { FakeClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { coreOn, type Dialect, dialects, whileNoSchemaIsDropped } from '../core/dialects.js';
import { newCard, newCustomer, TEST_CARD_DATA_KEY, type TestCore } from '../helpers/core.js';
import { BOT_INFO, callbackUpdate, textUpdate } from '../helpers/updates.js';
import type { ApiCall } from './harness.js';

const SECRET = 'inbox_secret';

/** One bot process: its own database connection, bot, inbox and Fastify app. */
interface Instance {
  name: string;
  runtime: CoreRuntime;
  bot: CardsBot;
  inbox: Inbox;
  app: FastifyInstance;
  /** Posts an update to this instance's webhook as Telegram would; returns the status. */
  post(update: Update | Record<string, unknown>, secret?: string): Promise<number>;
}

/** What the test's handler saw: each update as it started and ended, on which instance. */
interface Trace {
  started: { updateId: number; chat: string; instance: string }[];
  /** Update ids handled per chat, in the order they were handled. */
  handled: Map<string, number[]>;
  /** Times an update of a chat started while another of the same chat was still running. */
  overlaps: string[];
  calls: (ApiCall & { instance: string })[];
}

interface Cluster {
  t: TestCore;
  a: Instance;
  b: Instance;
  trace: Trace;
  /** Resolves once every stored update is handled and no instance is handling anything. */
  settled(): Promise<void>;
  pending(): Promise<number>;
}

interface ClusterOptions {
  /** How often each instance sweeps (10 ms unless told). */
  sweepIntervalMs?: { A?: number; B?: number };
  /** Replaces an instance's handling of an update (after the trace has recorded its start). */
  handleOn?: (instance: string, update: Update, handle: () => Promise<void>) => Promise<void>;
}

const chatOf = (update: Update) => String(update.message?.chat.id ?? update.callback_query?.message?.chat.id);

async function cluster(context: TestContext, dialect: Dialect, options: ClusterOptions = {}): Promise<Cluster> {
  // Undone last to first when the test ends.
  const teardown: (() => Promise<void>)[] = [];
  context.after(async () => {
    for (const step of teardown.reverse()) await step();
  });
  const t = await coreOn(dialect);
  teardown.push(() => t.close());
  const trace: Trace = { started: [], handled: new Map(), overlaps: [], calls: [] };
  const running = new Set<string>();
  let messageId = 1;

  const instance = async (name: string, runtime: CoreRuntime): Promise<Instance> => {
    const fakeFetch = async (url: string | URL | Request, init?: RequestInit) => {
      const method = String(url).split('/').pop()!;
      const payload = init?.body ? (JSON.parse(String(init.body)) as Record<string, any>) : {};
      trace.calls.push({ method, payload, instance: name });
      const chat = { id: Number(payload.chat_id), type: 'private', first_name: 'Alice' };
      const result =
        method === 'sendMessage' || method === 'editMessageText'
          ? { message_id: payload.message_id ?? messageId++, date: 1_700_000_000, chat, text: payload.text }
          : true;
      return new Response(JSON.stringify({ ok: true, result }), { headers: { 'content-type': 'application/json' } });
    };
    const bot = createBot(
      {
        core: runtime.core,
        db: runtime.database.db,
        clock: t.clock,
        logger: createLogger('silent'),
        config: { token: '1:test', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false },
      },
      { botInfo: BOT_INFO, fetch: fakeFetch as typeof fetch, sequentialize: false },
    );
    const handle = async (update: Update) => {
      const chat = chatOf(update);
      trace.started.push({ updateId: update.update_id, chat, instance: name });
      if (running.has(chat)) trace.overlaps.push(`${chat}: ${update.update_id} on ${name}`);
      running.add(chat);
      try {
        // A turn of the event loop first, so that another handler of the same chat would get to run.
        await new Promise((resolve) => setImmediate(resolve));
        const run = () => bot.handleUpdate(update);
        await (options.handleOn ? options.handleOn(name, update, run) : run());
        trace.handled.set(chat, [...(trace.handled.get(chat) ?? []), update.update_id]);
      } finally {
        running.delete(chat);
      }
    };
    const inbox = createInbox({
      db: runtime.database.db,
      clock: t.clock,
      logger: createLogger(process.env.INBOX_LOG ?? 'silent'),
      handle,
      sweepIntervalMs: options.sweepIntervalMs?.[name as 'A' | 'B'] ?? 10,
    });
    const app = Fastify();
    app.post('/telegram', inboxWebhookRoute(inbox, SECRET));
    teardown.push(async () => {
      await app.close();
      await inbox.stop();
    });
    const post = async (update: Update | Record<string, unknown>, secret = SECRET) =>
      (await app.inject({ method: 'POST', url: '/telegram', payload: update, headers: { 'x-telegram-bot-api-secret-token': secret } }))
        .statusCode;
    return { name, runtime, bot, inbox, app, post };
  };

  // On Postgres the second instance has a pool and a core of its own, as another process would. On SQLite it
  // shares the first one's connection: two connections in one process would wait for each other's locks
  // with the event loop blocked.
  let second: CoreRuntime = t;
  if (dialect === 'postgres') {
    const url = (t.database.target as { url: string }).url;
    second = await whileNoSchemaIsDropped(process.env.TEST_DATABASE_URL!, () =>
      startCore({ databaseUrl: url, cardDataKey: TEST_CARD_DATA_KEY, clock: t.clock }),
    );
    teardown.push(() => second.close());
  }
  const a = await instance('A', t);
  const b = await instance('B', second);

  const db = t.database.db.withTables<InboxTables>();
  const pending = async () => {
    const row = await db
      .selectFrom('bot_updates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('handled_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  const settled = async () => {
    for (;;) {
      await Promise.all([a.inbox.idle(), b.inbox.idle()]);
      if ((await pending()) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all([a.inbox.idle(), b.inbox.idle()]);
  };
  return { t, a, b, trace, settled, pending };
}

/** The confirm button of the latest keyboard with one. */
const confirmOf = (trace: Trace) =>
  trace.calls
    .flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat())
    .map((button: { callback_data?: string }) => button.callback_data ?? '')
    .findLast((data: string) => data.endsWith(':ok'))!;

const times = (trace: Trace, updateId: number) => trace.started.filter((s) => s.updateId === updateId).length;

for (const dialect of dialects()) {
  describe(`the webhook inbox, two instances on one database (${dialect})`, () => {
    it('handles every update once, a chat at a time and in update_id order, whichever instance it reached', async (context) => {
      const { a, b, trace, settled } = await cluster(context, dialect);
      const chats = Array.from({ length: 12 }, (_, i) => 8_100 + i);
      // Update ids interleave across chats, as Telegram numbers a bot's updates.
      const byChat = new Map<number, Update[]>(chats.map((chat) => [chat, []]));
      for (let round = 0; round < 6; round++) {
        for (const chat of chats) byChat.get(chat)!.push(textUpdate({ id: chat }, round % 2 === 0 ? '/start' : '/help'));
      }
      // Every chat at once; within a chat one post after the other, each to the other instance.
      const statuses = await Promise.all(
        chats.map(async (chat, c) => {
          const seen: number[] = [];
          for (const [i, update] of byChat.get(chat)!.entries()) seen.push(await ((i + c) % 2 === 0 ? a : b).post(update));
          return seen;
        }),
      );
      assert.ok(statuses.flat().every((status) => status === 200));
      await settled();

      assert.deepEqual(trace.overlaps, [], 'never two updates of one chat at once');
      for (const chat of chats) {
        const ids = byChat.get(chat)!.map((u) => u.update_id);
        assert.deepEqual(trace.handled.get(String(chat)), ids, `chat ${chat}: each update once, in order`);
      }
      assert.equal(trace.started.length, chats.length * 6);
      const on = (name: string) => trace.started.filter((s) => s.instance === name).length;
      assert.ok(on('A') > 0 && on('B') > 0, `both instances handled updates (A ${on('A')}, B ${on('B')})`);
      // Each update was answered by the bot (the start text or the help).
      const replies = trace.calls.filter((c) => c.method === 'sendMessage');
      assert.equal(replies.length, chats.length * 6);
    });

    it('handles an update Telegram delivers again (to either instance) once', async (context) => {
      const { a, b, trace, settled } = await cluster(context, dialect);
      const update = textUpdate({ id: 8_201 }, '/start');
      const statuses = await Promise.all([a.post(update), b.post(update), a.post(update)]);
      assert.deepEqual(statuses, [200, 200, 200]);
      await settled();
      assert.equal(await b.post(update), 200, 'a repeat after it was handled');
      await settled();
      assert.equal(times(trace, update.update_id), 1);
      assert.equal(trace.calls.filter((c) => c.method === 'sendMessage').length, 1);
    });

    it('refuses a post without the secret-token header, or with a body that is no update', async (context) => {
      const { a, trace, pending } = await cluster(context, dialect);
      const update = textUpdate({ id: 8_301 }, '/start');
      assert.equal(await a.post(update, 'wrong'), 401);
      const missing = await a.app.inject({ method: 'POST', url: '/telegram', payload: update });
      assert.equal(missing.statusCode, 401);
      assert.equal(await a.post({ update_id: 'x', message: {} }), 400);
      assert.equal(await a.post({ update_id: 5 }), 400);
      assert.equal(await pending(), 0);
      assert.equal(trace.started.length, 0);
    });

    it('takes over, with the sweep, the chats of a holder whose lease has lapsed (it died)', async (context) => {
      const { t, a, b, trace, settled, pending } = await cluster(context, dialect);
      const db = t.database.db.withTables<InboxTables>();
      const until = new Date(t.clock.now().getTime() + 30_000).toISOString();
      await db.insertInto('bot_chat_leases').values({ chat_key: 'chat:8401', claimed_by: 'dead', claimed_until: until }).execute();
      const updates = [textUpdate({ id: 8_401 }, '/start'), textUpdate({ id: 8_401 }, '/help')];
      assert.equal(await a.post(updates[0]!), 200);
      assert.equal(await b.post(updates[1]!), 200);
      await Promise.all([a.inbox.idle(), b.inbox.idle()]);
      assert.equal(await a.inbox.sweep(), 0, 'a live lease is left alone');
      assert.equal(await pending(), 2);
      assert.equal(trace.started.length, 0);

      (t.clock as FakeClock).advance(30_000);
      await settled();
      assert.deepEqual(
        trace.handled.get('8401'),
        updates.map((u) => u.update_id),
      );
    });

    it('handles again an update its holder was handling when it died; a confirm it had used does not move money twice', async (context) => {
      // Instance A "dies" right after handling the confirm: it neither marks it handled nor renews its lease.
      let dying = false;
      let revive = () => {};
      // Before the instances stop (hooks run in the order they were added).
      context.after(() => revive());
      const { t, a, b, trace, settled } = await cluster(context, dialect, {
        // A dead process sweeps no more.
        sweepIntervalMs: { A: 3_600_000 },
        handleOn: async (instance, update, handle) => {
          await handle();
          if (instance === 'A' && dying && update.callback_query?.data?.endsWith(':ok')) await new Promise<void>((r) => (revive = r));
        },
      });
      const me = await newCustomer(t);
      const card = await newCard(t, me);
      const chat = { id: 8_501 };
      for (const update of [textUpdate(chat, `/link ${me.token}`), callbackUpdate(chat, `c:topup:${card.id}`, 7), textUpdate(chat, '50')]) {
        await a.post(update);
        await settled();
      }
      const confirm = callbackUpdate(chat, confirmOf(trace));
      dying = true;
      await a.post(confirm);
      const later = textUpdate(chat, '/help');
      await b.post(later);
      // Once the money has moved on A, its lease lapses.
      while ((await t.core.getCard(me.caller, card.id)).balance === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      (t.clock as FakeClock).advance(30_000);
      while (!trace.handled.get('8501')?.includes(later.update_id)) {
        await b.inbox.idle();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }

      const runs = trace.started.filter((s) => s.updateId === confirm.update_id).map((s) => s.instance);
      assert.deepEqual(runs, ['A', 'B'], 'the confirm is handled again, on B');
      assert.equal((await t.core.getCard(me.caller, card.id)).balance, 5_000, 'topped up once');
      // On B the used confirm is only answered (a stale button); nothing says it topped up again.
      const onB = trace.calls.filter((c) => c.instance === 'B');
      assert.ok(onB.some((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === confirm.callback_query!.id));
      assert.ok(!onB.some((c) => /Topped up/.test(String(c.payload.text))));
      const handled = trace.handled.get('8501')!;
      assert.ok(handled.indexOf(confirm.update_id) < handled.indexOf(later.update_id), 'the later update after it');
    });

    it('a conversation started on one instance goes on when its next updates reach the other', async (context) => {
      const { t, a, b, trace, settled } = await cluster(context, dialect);
      const me = await newCustomer(t);
      const card = await newCard(t, me);
      const chat = { id: 8_601 };
      const texts = (mark = 0) =>
        trace.calls
          .slice(mark)
          .filter((c) => c.method === 'sendMessage' || c.method === 'editMessageText')
          .map((c) => String(c.payload.text));

      await a.post(textUpdate(chat, `/link ${me.token}`));
      await settled();
      // A starts the top-up and keeps the flow waiting for an amount; B gets the amount and quotes; A gets the confirm.
      await a.post(callbackUpdate(chat, `c:topup:${card.id}`, 7));
      await settled();
      await b.post(textUpdate(chat, '50'));
      await settled();
      assert.match(texts().join('\n'), /Total charged to the wallet/);
      const mark = trace.calls.length;
      await a.post(callbackUpdate(chat, confirmOf(trace)));
      await settled();

      assert.match(texts(mark).join('\n'), /Topped up/);
      assert.equal((await t.core.getCard(me.caller, card.id)).balance, 5_000);
    });
  });
}
