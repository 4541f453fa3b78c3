import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createI18n, LOCALES_FOLDER } from '../../src/bot/ui/i18n.js';
import { localMoney } from '../../src/bot/ui/format.js';
import { createLogger } from '../../src/infra/logger.js';
import { remoteTables } from '../../src/remote/tables.js';
import type { BotApiServer, ScriptedUser, StoredMessage } from '../helpers/bot-api-server.js';
import { FakeCardService, type Shape } from '../helpers/fake-card-service.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';
import { eventually } from '../helpers/wait.js';

// Issue 31, items 1, 4 and 5, over real Bot API traffic in both response shapes and both languages: a 401 is
// not forever (asked again; a token linked again is polled again), the user's own top-ups, withdrawals and
// closes are not pushed back as alerts (even when the watcher reads them while their request is in flight),
// a transaction's side reads the same in the push and the statement, and a top-up is bounded by the card's
// plan before anything is sent, the plan staying on every redraw of the card view.

const i18n = createI18n();
type Lang = 'en' | 'ru';
type Vars = Record<string, string | number | ReturnType<typeof localMoney>>;
const tr = (lang: Lang, key: string, vars?: Vars) => i18n.t(lang, key, vars);
const sources: Record<Lang, string> = {
  en: readFileSync(path.join(LOCALES_FOLDER, 'en.ftl'), 'utf8'),
  ru: readFileSync(path.join(LOCALES_FOLDER, 'ru.ftl'), 'utf8'),
};
/** A text's words before its first placeable (as written in the locale's file): what a message is recognised by. */
function head(lang: Lang, key: string): string {
  const value = new RegExp(`^${key} =(.*(?:\n {4}.*)*)`, 'm').exec(sources[lang])?.[1];
  const first = value
    ?.split('\n')
    .map((l) => l.trim())
    .find(Boolean);
  if (!first) throw new Error(`no text ${key} in ${lang}`);
  return first.split('{')[0]!.trim();
}
/** The card view's plan line, up to its deposit. */
function planLine(lang: Lang, plan: string, limit: number): string {
  const view = tr(lang, 'card-view', { name: '·', masked: '·', balance: '·', status: '·', plan, limit: localMoney(limit), deposit: '§' });
  return view
    .split('\n')
    .find((line) => line.includes(plan))!
    .split('§')[0]!;
}

/** The fake service's BINs: the wallet one starts at $0, the other at $5. */
const WALLET_BIN = 'b5d1c0de-0000-4000-8000-000000000001';
const ONLINE_BIN = 'b5d1c0de-0000-4000-8000-000000000002';
/** The fake service's Basic plan: a $1,000.00 limit for a $5.00 fee. */
const BASIC = { id: 1, limit: 100_000, fee: 500 };

describe('remote mode: codes arrive, own operations are not alerts, top-ups bounded by the card', { timeout: 240_000 }, () => {
  let bot: RemoteBot;
  let server: BotApiServer;
  let fake: FakeCardService;
  let chats = 9700;

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({
      serviceUrl: fake.url,
      logger: createLogger(process.env.LOG_LEVEL ?? 'silent'),
      settings: { CARD_SERVICE_POLL_SECONDS: '1' },
    });
    server = bot.server;
  });

  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  async function linked(user: ScriptedUser, lang: Lang, token: string): Promise<StoredMessage> {
    const step = user.send(`/link ${token}`);
    return server.nextMessage(user.chatId, step.mark, tr(lang, 'link-ok'));
  }

  const linkOf = async (chatId: number) =>
    bot.runtime.database.db
      .withTables<{ bot_chat_links: { chat_id: number } }>()
      .selectFrom('bot_chat_links')
      .select('chat_id')
      .where('chat_id', '=', chatId)
      .executeTakeFirst();

  /** Creates a card through the flow (the Wallet BIN, the Basic plan, no coupon); returns its view. */
  async function createCard(user: ScriptedUser, lang: Lang, menu: StoredMessage, name: string): Promise<StoredMessage> {
    let press = user.press(menu, tr(lang, 'menu-new-card'));
    const binPrompt = await server.nextMessage(user.chatId, press.mark, tr(lang, 'create-pick-bin'));
    press = user.press(binPrompt, /531993/);
    const planPrompt = await server.nextMessage(user.chatId, press.mark, tr(lang, 'create-pick-plan'));
    press = user.press(planPrompt, /Basic/);
    await server.nextMessage(user.chatId, press.mark, tr(lang, 'create-ask-name'));
    const step = user.send(name);
    const couponPrompt = await server.nextMessage(user.chatId, step.mark, tr(lang, 'create-ask-coupon'));
    press = user.press(couponPrompt, tr(lang, 'btn-skip'));
    const summary = await server.nextMessage(user.chatId, press.mark, head(lang, 'create-summary'));
    press = user.press(summary, tr(lang, 'btn-confirm'));
    return server.nextEdit(user.chatId, press.mark, head(lang, 'create-done'));
  }

  /** A card made at the service directly (not through the bot): the bot does not know its plan. */
  async function cardAtService(token: string, name: string, binId: string) {
    const response = await fetch(`${fake.url}/api/v1/cards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ bin_id: binId, name, planId: BASIC.id }),
    });
    const body = (await response.json()) as { data: { id: string } };
    return fake.cards.get(body.data.id)!;
  }

  /** The view `/cards` opens for the card named `name`. */
  async function openCard(user: ScriptedUser, lang: Lang, name: string): Promise<StoredMessage> {
    const step = user.send('/cards');
    const list = await server.nextMessage(user.chatId, step.mark, tr(lang, 'cards-title'));
    const press = user.press(list, name);
    return server.nextEdit(user.chatId, press.mark, name);
  }

  const pushesSince = (chatId: number, mark: number, prefix: string) =>
    server.calls
      .slice(mark)
      .filter(
        (c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId && String(c.payload.text).startsWith(prefix),
      )
      .map((c) => String(c.payload.text));

  /** Each shape once and each language once (the texts checked are the locale's own, so any pairing reads them). */
  const combos: { shape: Shape; lang: Lang }[] = [
    { shape: 'current', lang: 'en' },
    { shape: 'earlier', lang: 'ru' },
  ];

  for (const { shape, lang } of combos) {
    it(`${shape} shape, ${lang}: the offer bounded by the card's plan, the plan kept on redraws, the fee taken named; own operations not pushed, sides read alike`, async () => {
      const user = server.user(++chats, { languageCode: lang });
      const token = fake.addUser(shape, 200_000);
      const menu = await linked(user, lang, token);
      const name = `Bounded ${shape} ${lang}`;
      let view = await createCard(user, lang, menu, name);
      const card = [...fake.cards.values()].find((c) => c.name === name)!;
      const line = planLine(lang, 'Basic', BASIC.limit);
      assert.ok(view.text.includes(line), view.text);
      if (shape === 'earlier') {
        // Issued Processing: the note names the fee the service took, also when the card is added again by its id.
        const note = tr(lang, 'card-processing-note', { fee: localMoney(BASIC.fee) });
        assert.ok(view.text.includes(note), view.text);
        const step = user.send(`/addcard ${card.id}`);
        const added = await server.nextMessage(user.chatId, step.mark, name);
        assert.ok(added.text.includes(note), added.text);
        assert.ok(added.text.includes(line), added.text);
        fake.activate(card.id);
      }
      // The card opened again (a redraw from the service's record, which names no plan): the plan and limit stay.
      view = await openCard(user, lang, name);
      assert.ok(view.text.includes(line), view.text);

      // The offer is the card's room, and more is refused before anything is sent.
      let press = user.press(view, tr(lang, 'btn-topup'));
      const ask = await server.nextMessage(user.chatId, press.mark, head(lang, 'topup-ask'));
      assert.ok(ask.text.includes(tr(lang, 'topup-ask', { name, min: localMoney(500), max: localMoney(BASIC.limit) })), ask.text);
      let step = user.send('1100');
      await server.nextMessage(user.chatId, step.mark, tr(lang, 'topup-max-now', { max: localMoney(BASIC.limit) }));
      const topups = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`${card.id}/topup`)).length;
      assert.equal(topups(), 0, 'nothing sent that the service would refuse');

      // Our own top-up, answered late: the watcher (every second) reads its transaction while the request is in flight.
      fake.sideText = (side) => side.toLowerCase();
      fake.answerDelay = (method, path) => (method !== 'GET' && path.includes(card.id) ? 1_500 : 0);
      const fromMark = server.mark();
      try {
        step = user.send('25');
        const confirm = await server.nextMessage(
          user.chatId,
          step.mark,
          tr(lang, 'topup-confirm-unquoted', { name, amount: localMoney(2_500) }),
        );
        press = user.press(confirm, tr(lang, 'btn-confirm'));
        await server.nextEdit(user.chatId, press.mark, head(lang, 'topup-done'));
        assert.equal(topups(), 1);
        // The view redrawn after it keeps its plan.
        await server.waitForCall(
          (c) => c.method === 'editMessageText' && Number(c.payload.message_id) === view.messageId && String(c.payload.text).includes(line),
          press.mark,
        );

        // A purchase is news: pushed, its side read the same in the push and in the statement (`debit` in lower case).
        fake.purchase(card.id, 300, 'Kiosk');
        const debit = tr(lang, 'tx-side', { side: 'Debit' });
        const pushed = await server.waitForCall(
          (c) =>
            c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === user.chatId && String(c.payload.text).includes('Kiosk'),
          fromMark,
          20_000,
          'the purchase pushed',
        );
        assert.ok(String(pushed.payload.text).startsWith(`💸 ${debit} `), String(pushed.payload.text));
        press = user.press(view, tr(lang, 'btn-transactions'));
        const statement = await server.nextEdit(user.chatId, press.mark, 'Kiosk');
        const kiosk = statement.text.split('\n').find((l) => l.includes('Kiosk'))!;
        assert.ok(kiosk.includes(debit), `the statement says ${debit}: ${kiosk}`);
        press = user.press(statement, tr(lang, 'btn-back-card'));
        view = await server.nextEdit(user.chatId, press.mark, line);

        // Our own withdrawal (current) or close (earlier), answered late as well.
        if (shape === 'current') {
          press = user.press(view, tr(lang, 'btn-withdraw'));
          await server.nextMessage(user.chatId, press.mark, head(lang, 'withdraw-ask'));
          step = user.send('10');
          const sure = await server.nextMessage(user.chatId, step.mark, head(lang, 'withdraw-confirm'));
          press = user.press(sure, tr(lang, 'btn-confirm'));
          await server.nextEdit(user.chatId, press.mark, head(lang, 'withdraw-done'));
        } else {
          press = user.press(view, tr(lang, 'btn-close'));
          const sure = await server.nextMessage(user.chatId, press.mark, head(lang, 'close-warning'));
          press = user.press(sure, tr(lang, 'btn-confirm'));
          await server.nextEdit(user.chatId, press.mark, head(lang, 'close-done'));
          assert.equal(card.status, 'closed');
        }
        // Polls later (every second), nothing but the purchase was pushed: the user's own operations are not alerts.
        await sleep(2_500);
        const alerts = [...pushesSince(user.chatId, fromMark, '💸'), ...pushesSince(user.chatId, fromMark, '⛔')];
        assert.equal(alerts.length, 1, alerts.join('\n'));
        assert.ok(alerts[0]!.includes('Kiosk'));
      } finally {
        fake.answerDelay = undefined;
        fake.sideText = (side) => side;
      }
    });
  }

  for (const { shape, lang } of combos) {
    it(`${shape} shape, ${lang}: a card whose plan the bot does not know is offered what the highest plan allows, says so, and learns the limit from a refusal`, async () => {
      const user = server.user(++chats, { languageCode: lang });
      const token = fake.addUser(shape, 200_000);
      await linked(user, lang, token);
      const name = `Unknown ${shape} ${lang}`;
      const card = await cardAtService(token, name, ONLINE_BIN);
      let step = user.send(`/addcard ${card.id}`);
      let view = await server.nextMessage(user.chatId, step.mark, name);
      if (shape === 'earlier') {
        // Being issued, with a fee the bot cannot know: not named (never $0.00).
        assert.ok(view.text.includes(tr(lang, 'card-processing-note-no-fee')), view.text);
        assert.ok(!view.text.includes(tr(lang, 'card-processing-note', { fee: localMoney(0) })), view.text);
        fake.activate(card.id);
        view = await openCard(user, lang, name);
      }
      let press = user.press(view, tr(lang, 'btn-topup'));
      const highest = 1_000_000 - 500;
      const ask = await server.nextMessage(user.chatId, press.mark, head(lang, 'topup-ask'));
      assert.ok(ask.text.includes(tr(lang, 'topup-ask', { name, min: localMoney(500), max: localMoney(highest) })), ask.text);
      assert.ok(ask.text.includes(tr(lang, 'topup-limit-unknown')), ask.text);
      step = user.send('9999');
      await server.nextMessage(user.chatId, step.mark, tr(lang, 'topup-max-now', { max: localMoney(highest) }));
      // Within the highest plan's room but over this card's: sent, refused by the service, and its limit learnt.
      step = user.send('1100');
      const confirm = await server.nextMessage(user.chatId, step.mark, head(lang, 'topup-confirm-unquoted'));
      press = user.press(confirm, tr(lang, 'btn-confirm'));
      const room = { deposit: localMoney(500), limit: localMoney(BASIC.limit), available: localMoney(BASIC.limit - 500) };
      await server.nextEdit(user.chatId, press.mark, tr(lang, 'refusal-card-limit-exceeded', room));
      // The next offer is this card's room: the limit the service named is remembered.
      view = await openCard(user, lang, name);
      press = user.press(view, tr(lang, 'btn-topup'));
      const again = await server.nextMessage(user.chatId, press.mark, head(lang, 'topup-ask'));
      assert.ok(again.text.includes(tr(lang, 'topup-ask', { name, min: localMoney(500), max: localMoney(BASIC.limit - 500) })), again.text);
      assert.ok(!again.text.includes(tr(lang, 'topup-limit-unknown')), again.text);
    });
  }

  for (const { shape, lang } of combos) {
    it(`${shape} shape, ${lang}: one 401 does not end the link: asked again, the tap is answered`, async () => {
      const user = server.user(++chats, { languageCode: lang });
      const token = fake.addUser(shape, 12_300);
      const menu = await linked(user, lang, token);
      fake.unauthorizedNext = 1;
      const press = user.press(menu, tr(lang, 'menu-wallet'));
      await server.nextEdit(user.chatId, press.mark, tr(lang, 'wallet-balance', { balance: localMoney(12_300) }));
      assert.equal(fake.unauthorizedNext, 0, 'the service refused the token once');
      await sleep(500);
      assert.ok(await linkOf(user.chatId), 'still linked');
      assert.deepEqual(pushesSince(user.chatId, press.mark, head(lang, 'unlinked-token_revoked')), []);
    });

    it(`${shape} shape, ${lang}: a 401 for 1.5 s ends the link; linked again, the watched card's next code arrives within 2 s`, async () => {
      const user = server.user(++chats, { languageCode: lang });
      const token = fake.addUser(shape, 50_000);
      const menu = await linked(user, lang, token);
      const name = `Watched ${shape} ${lang}`;
      const card = await cardAtService(token, name, WALLET_BIN);
      fake.activate(card.id);
      const step = user.send(`/addcard ${card.id}`);
      const view = await server.nextMessage(user.chatId, step.mark, name);
      const watching = user.press(view, tr(lang, 'btn-watch'));
      await server.waitForCall(
        (c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === watching.queryId,
        watching.mark,
      );
      // Its first poll took what it had as history (a card the bot did not create): what comes from now on is news.
      await eventually('the card was polled', async () => {
        const row = await remoteTables(bot.runtime.database.db)
          .selectFrom('bot_remote_cards')
          .select('baselined_at')
          .where('card_id', '=', card.id)
          .executeTakeFirst();
        return Boolean(row?.baselined_at);
      });
      // The service refuses every token for 1.5 s (a restart): a tap then is refused twice, and the link ends.
      fake.unauthorizedUntil = Date.now() + 1_500;
      const press = user.press(menu, tr(lang, 'menu-wallet'));
      await server.nextMessage(user.chatId, press.mark, tr(lang, 'refusal-invalid-token'));
      await eventually('the link ended', async () => (await linkOf(user.chatId)) === undefined);
      await sleep(Math.max(0, fake.unauthorizedUntil - Date.now()) + 200);
      // Linked again: the token is polled again, the card still watched.
      await linked(user, lang, token);
      const mark = server.mark();
      const otp = fake.addOtp(card.id);
      const added = Date.now();
      await server.waitForCall(
        (c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === user.chatId && String(c.payload.text).includes(otp.code),
        mark,
        2_000,
        'the OTP pushed within 2 s',
      );
      assert.ok(Date.now() - added < 2_000);
    });
  }
});
