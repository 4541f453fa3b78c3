import type { Bot } from 'grammy';
import type { BotContext } from '../../src/bot/context.js';
import { createBot } from '../../src/bot/index.js';
import type { CardsBot } from '../../src/bot/runtime/cards-bot.js';
import type { BotConfig } from '../../src/bot/services.js';
import type { CardService } from '../../src/core/service.js';
import { capturedLogger } from '../helpers/log.js';
import { createTestCore, newCustomer, type Customer, type TestCore } from '../helpers/core.js';
import { BOT_INFO, textUpdate } from '../helpers/updates.js';

export interface ApiCall {
  method: string;
  payload: Record<string, any>;
}

/**
 * A bot fed with `handleUpdate`, its HTTP layer replaced by a fake `fetch` that records every call
 * (those made inside conversations too) and answers like Telegram, its log captured as text, over
 * an in-memory core.
 */
export interface Harness {
  t: TestCore;
  bot: CardsBot;
  calls: ApiCall[];
  log: () => string;
  /** Calls recorded since `mark` (an index into `calls`). */
  since(mark: number, method?: string): ApiCall[];
  /** Runs one update; returns the calls made meanwhile. */
  send(update: Parameters<Bot<BotContext>['handleUpdate']>[0]): Promise<ApiCall[]>;
  /** Resolves with the first call after `mark` matching `predicate` (for background jobs); rejects after `timeoutMs`. */
  waitFor(predicate: (call: ApiCall) => boolean, mark?: number, timeoutMs?: number): Promise<ApiCall>;
  /** A customer whose private chat (chat id = `chatId`) is linked. */
  linkedCustomer(chatId: number, deposit?: number): Promise<Customer>;
  /** A new bot over the same database and call log, as after a restart. */
  restart(): void;
}

export interface HarnessOptions {
  config?: Partial<BotConfig>;
  /** Replaces core functions, e.g. to make one fail unexpectedly. */
  core?: Partial<CardService>;
  /** Makes matching API calls fail as Telegram would: return the error code and description. */
  failCall?: (method: string, payload: Record<string, any>) => { code: number; description: string; retryAfter?: number } | undefined;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const t = await createTestCore();
  const { logger, text: logText } = capturedLogger('debug');
  const calls: ApiCall[] = [];
  const waiters = new Set<() => void>();
  let messageId = 1;
  const fakeFetch = async (url: string | URL | Request, init?: RequestInit) => {
    const method = String(url).split('/').pop()!;
    const p = init?.body ? (JSON.parse(String(init.body)) as Record<string, any>) : {};
    calls.push({ method, payload: p });
    for (const wake of [...waiters]) wake();
    const failure = options.failCall?.(method, p);
    if (failure) {
      const body = {
        ok: false,
        error_code: failure.code,
        description: failure.description,
        ...(failure.retryAfter !== undefined ? { parameters: { retry_after: failure.retryAfter } } : {}),
      };
      return new Response(JSON.stringify(body), { status: failure.code, headers: { 'content-type': 'application/json' } });
    }
    const chat = { id: Number(p.chat_id), type: 'private', first_name: 'Alice' };
    const result =
      method === 'sendMessage' || method === 'editMessageText'
        ? { message_id: p.message_id ?? messageId++, date: 1_700_000_000, chat, text: p.text, reply_markup: p.reply_markup }
        : true;
    return new Response(JSON.stringify({ ok: true, result }), { headers: { 'content-type': 'application/json' } });
  };
  const core = options.core ? Object.assign(Object.create(t.core) as CardService, options.core) : t.core;
  const makeBot = () =>
    createBot(
      {
        core,
        db: t.database.db,
        clock: t.clock,
        logger,
        config: {
          token: '1:test',
          apiRoot: 'http://127.0.0.1:9',
          sensitiveTtlSeconds: 60,
          otpTtlSeconds: 60,
          rateLimit: false,
          pollIntervalMs: 20,
          ...options.config,
        },
      },
      { botInfo: BOT_INFO, fetch: fakeFetch as typeof fetch },
    );
  const harness: Harness = {
    t,
    bot: makeBot(),
    calls,
    log: logText,
    since: (mark, method) => calls.slice(mark).filter((c) => method === undefined || c.method === method),
    async send(update) {
      const mark = calls.length;
      await harness.bot.handleUpdate(update);
      return calls.slice(mark);
    },
    async waitFor(predicate, mark = 0, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = calls.slice(mark).find(predicate);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `Timed out waiting for a call; calls since mark: ${calls
              .slice(mark)
              .map((c) => c.method)
              .join(', ')}`,
          );
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, left);
          waiters.add(wake);
        });
      }
    },
    async linkedCustomer(chatId, deposit = 100_000) {
      const customer = await newCustomer(t, deposit);
      await harness.send(textUpdate({ id: chatId }, `/link ${customer.token}`));
      return customer;
    },
    restart() {
      harness.bot = makeBot();
    },
  };
  return harness;
}

export const texts = (calls: ApiCall[]) =>
  calls.filter((c) => c.method === 'sendMessage' || c.method === 'editMessageText').map((c) => String(c.payload.text));
