import { Writable } from 'node:stream';
import type { Bot } from 'grammy';
import { createBot, type BotContext } from '../../src/bot/index.js';
import { createLogger } from '../../src/logger.js';
import { createTestCore, newCustomer, type Customer, type TestCore } from '../helpers/core.js';
import { BOT_INFO } from '../helpers/updates.js';

export interface ApiCall {
  method: string;
  payload: Record<string, any>;
}

/**
 * A bot fed with `handleUpdate`, its API calls recorded by a transformer (never sent anywhere), its
 * log captured as text, over an in-memory core.
 */
export interface Harness {
  t: TestCore;
  bot: Bot<BotContext>;
  calls: ApiCall[];
  log: () => string;
  /** Calls recorded since `mark` (an index into `calls`). */
  since(mark: number, method?: string): ApiCall[];
  /** Runs one update; returns the calls it made. */
  send(update: Parameters<Bot<BotContext>['handleUpdate']>[0]): Promise<ApiCall[]>;
  /** A customer whose private chat (chat id = `chatId`) is linked. */
  linkedCustomer(chatId: number, deposit?: number): Promise<Customer>;
}

export async function createHarness(options: { sensitiveTtlSeconds?: number } = {}): Promise<Harness> {
  const t = await createTestCore();
  let logText = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      logText += String(chunk);
      done();
    },
  });
  const logger = createLogger('debug', sink);
  const calls: ApiCall[] = [];
  let messageId = 1;
  // The bot's HTTP layer itself is replaced, so calls from inside conversations are recorded too.
  const fakeFetch = async (url: string | URL | Request, init?: RequestInit) => {
    const method = String(url).split('/').pop()!;
    const p = init?.body ? (JSON.parse(String(init.body)) as Record<string, any>) : {};
    calls.push({ method, payload: p });
    const chat = { id: Number(p.chat_id), type: 'private', first_name: 'Alice' };
    const result =
      method === 'sendMessage' || method === 'editMessageText'
        ? { message_id: p.message_id ?? messageId++, date: 1_700_000_000, chat, text: p.text, reply_markup: p.reply_markup }
        : true;
    return new Response(JSON.stringify({ ok: true, result }), { headers: { 'content-type': 'application/json' } });
  };
  const bot = createBot(
    {
      core: t.core,
      db: t.database.db,
      clock: t.clock,
      logger,
      config: { token: '1:test', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: options.sensitiveTtlSeconds ?? 60, otpTtlSeconds: 60, rateLimit: false },
    },
    { botInfo: BOT_INFO, fetch: fakeFetch as typeof fetch },
  );
  const harness: Harness = {
    t,
    bot,
    calls,
    log: () => logText,
    since: (mark, method) => calls.slice(mark).filter((c) => method === undefined || c.method === method),
    async send(update) {
      const mark = calls.length;
      await bot.handleUpdate(update);
      return calls.slice(mark);
    },
    async linkedCustomer(chatId, deposit = 100_000) {
      const customer = await newCustomer(t, deposit);
      const { textUpdate } = await import('../helpers/updates.js');
      await harness.send(textUpdate({ id: chatId }, `/link ${customer.token}`));
      return customer;
    },
  };
  return harness;
}

export const texts = (calls: ApiCall[]) => calls.filter((c) => c.method === 'sendMessage' || c.method === 'editMessageText').map((c) => String(c.payload.text));
