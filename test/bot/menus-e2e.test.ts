import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import type { BotApiServer, ScriptedUser, StoredMessage } from '../helpers/bot-api-server.js';
import { newCard, newCustomer, type Customer } from '../helpers/core.js';

/** The system clock, run ahead on demand: a card's top-up cooldown passes without waiting for it. */
const clock = {
  ahead: 0,
  now: () => new Date(Date.now() + clock.ahead),
};

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

/**
 * Menus over real Bot API traffic (no admins' chat): moving between screens edits the pressed message
 * instead of posting new ones, and the everyday screens and flows reached that way say what they should.
 */
describe('menus edit their message in place, over real Bot API traffic', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-menus', {}, { clock }));
  });

  after(() => e2e?.stop());

  /** A linked chat for `customer`; returns the user and the main menu the link answered with. */
  async function linked(chatId: number, customer: Customer): Promise<{ user: ScriptedUser; menu: StoredMessage }> {
    const user = server.user(chatId);
    const step = user.send(customer.token);
    return { user, menu: await server.nextMessage(chatId, step.mark, 'Linked') };
  }

  /** The card's view, opened from `/cards` (the list is a new message; the card is drawn in its place). */
  async function openCard(user: ScriptedUser, name: string): Promise<StoredMessage> {
    const list = await server.nextMessage(user.chatId, user.send('/cards').mark, 'Your cards');
    return server.nextEdit(user.chatId, user.press(list, name).mark, 'Status: active');
  }

  it('every screen from the main menu is drawn in its message and leads back: the chat grows by no message', async () => {
    const customer = await newCustomer(runtime);
    await newCard(runtime, customer, 'Ads');
    const { user, menu } = await linked(5101, customer);
    const before = server.botMessages(user.chatId).length;
    const mark = server.mark();
    const path: [label: string | RegExp, shows: string][] = [
      ['My cards', 'Your cards'],
      [/Ads/, 'Status: active'],
      ['Transactions', 'No transactions'],
      ['Back to card', 'Status: active'],
      ['OTP', 'No OTPs for this card yet'],
      ['Back to card', 'Status: active'],
      ['Back', 'Your cards'],
      ['Menu', 'Main menu'],
      ['Wallet', 'Wallet balance: $995.00'],
      ['Menu', 'Main menu'],
      ['Transactions', 'No transactions'],
      ['Menu', 'Main menu'],
      ['OTPs', 'Pick a card for its OTPs'],
      ['Menu', 'Main menu'],
      ['Help', '/cancel'],
      ['Menu', 'Main menu'],
      ['Add money', 'Add money to your wallet'],
      ['Menu', 'Main menu'],
    ];
    for (const [label, shows] of path) {
      const shown = await server.nextEdit(user.chatId, user.press(menu, label).mark, shows);
      assert.equal(shown.messageId, menu.messageId, `${String(label)}: drawn in the menu's message`);
    }
    const calls = server.calls.slice(mark).filter((c) => Number(c.payload.chat_id) === user.chatId);
    assert.equal(calls.filter((c) => c.method === 'editMessageText').length, path.length);
    assert.deepEqual(
      calls.filter((c) => c.method === 'sendMessage'),
      [],
    );
    assert.equal(server.botMessages(user.chatId).length, before);
    assert.deepEqual(buttons(server.message(user.chatId, menu.messageId)!).slice(0, 2), ['💰 Wallet', '💳 My cards']);
    assert.deepEqual(
      server.calls.slice(mark).filter((c) => !c.ok),
      [],
    );
    assert.deepEqual(server.unansweredQueries(), []);
  });

  it('a message Telegram will not edit gets the screen as a new one; the same screen drawn again is left quietly', async () => {
    const customer = await newCustomer(runtime);
    const card = await newCard(runtime, customer, 'Ads');
    const { user, menu } = await linked(5102, customer);

    // Too old to edit: the list comes as a new message, the menu stays as it was.
    const drawn = menu.text;
    server.refuse((method) =>
      method === 'editMessageText' ? { code: 400, description: "Bad Request: message can't be edited" } : undefined,
    );
    let press: { mark: number; queryId: string } = user.press(menu, 'My cards');
    const list = await server.nextMessage(user.chatId, press.mark, 'Your cards');
    server.refuse();
    assert.equal(server.message(user.chatId, menu.messageId)!.text, drawn);

    // Deleted meanwhile: the card comes as a new message.
    server.message(user.chatId, list.messageId)!.deleted = true;
    press = user.press(list, 'Ads');
    const view = await server.nextMessage(user.chatId, press.mark, 'Status: active');
    assert.ok(
      server.calls.slice(press.mark).some((c) => c.method === 'editMessageText' && c.error === 'Bad Request: message to edit not found'),
    );

    // A second press on what is already shown: Telegram says "not modified", and nothing else happens.
    press = user.pressData(view, `c:view:${card.id}`);
    await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === press.queryId, press.mark);
    const after = server.calls.slice(press.mark).filter((c) => c.method !== 'answerCallbackQuery');
    assert.deepEqual(
      after.map((c) => `${c.method}: ${c.error ?? 'ok'}`),
      ['editMessageText: Bad Request: message is not modified'],
    );
    assert.deepEqual(server.unansweredQueries(), []);
  });

  it("top-up offers this card's own range: a card with $30 of its limit left says $30.00, not the service-wide $10,000", async () => {
    const customer = await newCustomer(runtime, 300_000);
    const card = await newCard(runtime, customer, 'Ads');
    await runtime.core.topup(customer.caller, card.id, { amount: 97_000 });
    clock.ahead += 3 * 60_000;
    const { user } = await linked(5103, customer);
    const view = await openCard(user, 'Ads');
    const ask = await server.nextMessage(user.chatId, user.press(view, 'Top up').mark, 'How much to top up');
    assert.match(ask.text, /From \$5\.00 to \$30\.00\./);
    assert.doesNotMatch(ask.text, /10,000/);
    assert.deepEqual(buttons(ask), ['$10.00', '$25.00', '✏️ Other amount']);
    await server.nextMessage(user.chatId, user.send('/cancel').mark, 'Cancelled');
  });

  it('withdraw offers presets within the balance and "All", which withdraws the whole balance', async () => {
    const customer = await newCustomer(runtime);
    const card = await newCard(runtime, customer, 'Ads');
    await runtime.core.topup(customer.caller, card.id, { amount: 7_300 });
    const { user } = await linked(5104, customer);
    const view = await openCard(user, 'Ads');
    const ask = await server.nextMessage(user.chatId, user.press(view, 'Withdraw').mark, 'How much to withdraw');
    assert.deepEqual(buttons(ask), ['$10.00', '$25.00', '$50.00', 'All ($73.00)', '✏️ Other amount']);
    let press = user.press(ask, 'All');
    const confirm = await server.nextMessage(user.chatId, press.mark, 'Withdraw $73.00 from “Ads”');
    press = user.press(confirm, 'Confirm');
    const done = await server.nextEdit(user.chatId, press.mark, 'Withdrew $73.00. Card balance: $0.00');
    assert.equal(done.messageId, confirm.messageId);
    const refreshed = await server.nextEdit(user.chatId, press.mark, 'Balance: $0.00');
    assert.equal(refreshed.messageId, view.messageId);
    assert.equal((await runtime.core.getCard(customer.caller, card.id)).balance, 0);
  });

  it("with no admins' chat, a deposit request says it is recorded for the operator, not sent to administrators", async () => {
    const customer = await newCustomer(runtime, 0);
    const { user, menu } = await linked(5105, customer);
    const mark = server.mark();
    let press = user.press(menu, 'Add money');
    const intro = await server.nextEdit(user.chatId, press.mark, 'Add money to your wallet');
    assert.match(
      intro.text,
      /with an optional note kept with the request \(a transfer reference\), e\.g\. \/deposit 250 wire ref 8812\. A request is recorded, and the service's operator approves or rejects it from their command line\.$/,
    );
    press = user.press(intro, /^\$50$/);
    const offer = await server.nextEdit(user.chatId, press.mark, 'Add $50.00 to your wallet?');
    assert.equal(offer.text, 'Add $50.00 to your wallet?\nNote kept with the request: —');
    assert.deepEqual(buttons(offer), ['🏦 Record a request for the operator', 'Cancel']);
    for (const shown of [intro, offer]) assert.doesNotMatch(shown.text, /administrator/);
    press = user.press(offer, 'Record a request');
    const said = await server.nextEdit(user.chatId, press.mark, 'Request #');
    assert.match(
      said.text,
      /^Request #\d+ for \$50\.00 is recorded; the service's operator decides such requests from their command line\./,
    );
    assert.doesNotMatch(said.text, /administrators/);
    assert.equal(said.messageId, menu.messageId);
    const [request] = await runtime.funding!.deposits.list({ userId: customer.userId });
    assert.equal(request?.amount, 5_000);
    assert.deepEqual(
      server.calls.slice(mark).filter((c) => c.method === 'sendMessage'),
      [],
      'posted nowhere',
    );
  });

  it("with no admins' chat, the Russian deposit request speaks of the operator too", async () => {
    const customer = await newCustomer(runtime, 0);
    const user = server.user(5107, { languageCode: 'ru' });
    const menu = await server.nextMessage(user.chatId, user.send(customer.token).mark, 'Главное меню');
    let press = user.press(menu, 'Пополнить кошелёк');
    const intro = await server.nextEdit(user.chatId, press.mark, 'Пополнение кошелька');
    assert.match(
      intro.text,
      /с необязательной заметкой к заявке \(например, номер перевода\): \/deposit 250 перевод 8812\. Заявка будет записана, а одобрит или отклонит её оператор сервиса из своей командной строки\.$/,
    );
    press = user.press(intro, /^\$50$/);
    const offer = await server.nextEdit(user.chatId, press.mark, 'Пополнить кошелёк на');
    assert.match(offer.text, /\nЗаметка к заявке: —$/);
    assert.equal(buttons(offer)[0], '🏦 Записать заявку для оператора');
    for (const shown of [intro, offer]) assert.doesNotMatch(shown.text, /администратор/);
    press = user.press(offer, 'Записать заявку');
    const said = await server.nextEdit(user.chatId, press.mark, 'Заявка №');
    assert.match(said.text, /записана; такие заявки оператор сервиса решает из своей командной строки/);
  });

  it('the Russian welcome names the message it deletes: the one holding the token', async () => {
    const user = server.user(5106, { languageCode: 'ru' });
    const welcome = await server.nextMessage(user.chatId, user.send('/start').mark, 'API-токен');
    assert.match(welcome.text, /Сообщение с токеном я сразу удалю\./);
  });
});
