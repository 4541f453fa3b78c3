import { Bot } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import { createBot } from '../src/bot/index.js';
import { startCore } from '../src/app/compose.js';
import { FakeClock } from '../src/infra/clock.js';
import { createLogger } from '../src/infra/logger.js';

/**
 * Bot update throughput through `handleUpdate`, API calls stubbed by a transformer: menu navigation
 * (conversation state on SQLite, the link re-checked with the core, one core read) and a full top-up conversation, each
 * beside a bare grammY echo bot measured in the same run. The per-user rate limiter is off: it would
 * refuse one user pressing this fast. `BENCH_SECONDS` sets the measuring time, `BENCH_PART=menu` stops
 * after the menu.
 */

const BOT_INFO = {
  id: 1,
  is_bot: true,
  first_name: 'B',
  username: 'b_bot',
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
} as UserFromGetMe;
const CHAT = 42;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

let updateId = 1;
let messageId = 1;
const from = { id: CHAT, is_bot: false as const, first_name: 'A', language_code: 'en' };
const chat = { id: CHAT, type: 'private' as const, first_name: 'A' };
const text = (t: string): Update =>
  ({
    update_id: updateId++,
    message: {
      message_id: messageId++,
      date: 0,
      chat,
      from,
      text: t,
      ...(t.startsWith('/') ? { entities: [{ type: 'bot_command', offset: 0, length: t.split(' ')[0]!.length }] } : {}),
    },
  }) as Update;
const press = (data: string): Update =>
  ({
    update_id: updateId++,
    callback_query: {
      id: String(updateId),
      from,
      chat_instance: '1',
      data,
      message: { message_id: 1, date: 0, chat, from: BOT_INFO, text: 'x' },
    },
  }) as Update;

/** Keeps only the last call with a keyboard (where the next button is read from). */
type Recorded = { last?: { method: string; payload: any } };
function stubApi(bot: { api: Bot<any>['api'] }, record?: Recorded): void {
  bot.api.config.use(async (_prev, method, payload: any) => {
    if (record && payload?.reply_markup) record.last = { method, payload };
    const result =
      method === 'sendMessage' || method === 'editMessageText' ? { message_id: messageId++, date: 0, chat, text: payload.text } : true;
    return { ok: true, result } as never;
  });
}

/** Updates per second of `step`, interleaved in short slices with the echo bot so load from elsewhere hits both alike. */
async function compare(label: string, step: () => Promise<number>, echo: () => Promise<number>): Promise<{ mine: number; base: number }> {
  // Warm both up to steady state (optimized code) before measuring: a second each, in turns.
  for (const fn of [step, echo, step, echo]) {
    const started = performance.now();
    while (performance.now() - started < 500) await fn();
  }
  const totals = { mine: { n: 0, ms: 0 }, base: { n: 0, ms: 0 } };
  const slice = (SECONDS * 1000) / 20;
  for (let round = 0; round < 10; round++) {
    for (const [which, fn] of [
      ['mine', step],
      ['base', echo],
    ] as const) {
      const started = performance.now();
      let n = 0;
      while (performance.now() - started < slice) n += await fn();
      totals[which].n += n;
      totals[which].ms += performance.now() - started;
    }
  }
  const mine = totals.mine.n / (totals.mine.ms / 1000);
  const base = totals.base.n / (totals.base.ms / 1000);
  const fmt = (v: number) => Math.round(v).toLocaleString('en-US').padStart(9);
  console.log(`${label.padEnd(44)} ${fmt(mine)} updates/s   echo bot ${fmt(base)} updates/s   ratio ${((mine / base) * 100).toFixed(1)}%`);
  return { mine, base };
}

function echoBot(): () => Promise<number> {
  const echo = new Bot('1:echo', { botInfo: BOT_INFO });
  stubApi(echo);
  echo.on('message:text', (ctx) => ctx.reply(ctx.msg.text));
  return async () => {
    await echo.handleUpdate(text('hello'));
    return 1;
  };
}

export default async function (): Promise<void> {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const runtime = await startCore({ databaseUrl: ':memory:', cardDataKey: Buffer.alloc(32, 7), clock });
  const { token, userId } = await runtime.admin.createUser({ name: 'Bench', deposit: 100_000_000 });
  const caller = await runtime.core.authenticate(token);
  const bin = (await runtime.core.listBins())[0]!;
  const plans = await runtime.core.listPlans();
  const plan = plans[plans.length - 1]!;
  const newCard = async () => (await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: 'Bench' })).id;
  const record: Recorded = {};
  const bot = createBot(
    {
      core: runtime.core,
      db: runtime.database.db,
      clock,
      logger: createLogger('silent'),
      config: { token: '1:bench', apiRoot: 'http://127.0.0.1:9', sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false },
    },
    { botInfo: BOT_INFO },
  );
  stubApi(bot, record);
  await bot.handleUpdate(text(`/link ${token}`));
  await bot.handleUpdate(text('/menu'));
  const walletButton = (record.last!.payload.reply_markup.inline_keyboard as { callback_data: string }[][]).flat()[0]!.callback_data;

  const echo = echoBot();
  const menu = await compare(
    'menu navigation (Wallet button)',
    async () => {
      await bot.handleUpdate(press(walletButton));
      return 1;
    },
    echo,
  );

  const menuRatio = (menu.mine / menu.base) * 100;
  const menuLine = `menu navigation / echo: ${menuRatio.toFixed(1)}% (target >= 10%: ${menuRatio >= 10 ? 'ok' : 'NOT MET'})`;
  if (process.env.BENCH_PART === 'menu') {
    console.log(menuLine);
    return void (await runtime.close());
  }
  let cardId = await newCard();
  let topups = 0;
  const limitTopups = Math.floor(plan.limit / 500) - 2;
  const confirmOf = () =>
    (record.last!.payload.reply_markup.inline_keyboard as { callback_data: string }[][])
      .flat()
      .find((b) => b.callback_data.endsWith(':ok'))!.callback_data;
  const conversation = await compare(
    'full top-up conversation (3 updates each)',
    async () => {
      if (++topups >= limitTopups) {
        cardId = await newCard();
        topups = 0;
      }
      clock.advance(121_000);
      await bot.handleUpdate(press(`c:topup:${cardId}`));
      await bot.handleUpdate(text('5'));
      await bot.handleUpdate(press(confirmOf()));
      return 3;
    },
    echo,
  );

  console.log(menuLine);
  console.log(`top-up conversation / echo: ${((conversation.mine / conversation.base) * 100).toFixed(1)}%`);
  void userId;
  await runtime.close();
}
