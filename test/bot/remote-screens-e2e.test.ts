import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer, ScriptedUser, StoredMessage } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';

// Issue 31, items 6 to 9 in remote mode, in Russian, over real Bot API traffic in front of a service written from the
// spec (no card listing, no quote, the current response shape): /addcard in the command list and /help; Close after a
// withdrawal told its wait before Confirm, in words about closing; a stale Freeze redrawn; the service's own statement lines in Russian.
// (English and the earlier shape: test/remote/bot-e2e.test.ts.)

/** Words a Russian chat must not see: BIN categories, the fake service's own statement lines, Debit/Credit, `at —`. */
const ENGLISH = /\b(Online|Wallet|Initial|Top-up|Withdrawal|Card closed|Debit|Credit|between withdrawals)\b|at —|25\.50/;

describe('remote mode: the chat in Russian, its screens and words', { timeout: 120_000 }, () => {
  let bot: RemoteBot;
  let server: BotApiServer;
  let fake: FakeCardService;

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({
      serviceUrl: fake.url,
      logger: createLogger('silent'),
      settings: { CARD_SERVICE_POLL_SECONDS: '60' },
    });
    ({ server } = bot);
  });

  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  async function linked(user: ScriptedUser, token: string): Promise<StoredMessage> {
    const step = user.send(token);
    return server.nextMessage(user.chatId, step.mark, 'Чат привязан');
  }

  it('/addcard is in the command list, in both languages, and in /help', async () => {
    const lists = server.calls.filter((c) => c.method === 'setMyCommands');
    assert.equal(lists.length, 2, 'English and Russian');
    for (const list of lists) {
      const commands = (list.payload.commands as { command: string; description: string }[]).map((c) => c.command);
      assert.ok(commands.includes('addcard'), commands.join(', '));
    }
    const ru = lists.find((c) => c.payload.language_code === 'ru')!;
    assert.ok(JSON.stringify(ru.payload.commands).includes('Добавить карту по id'));
    const olga = server.user(9301, { languageCode: 'ru' });
    await linked(olga, fake.addUser('current', 100_000));
    const step = olga.send('/help');
    const help = await server.nextMessage(olga.chatId, step.mark, '/cancel');
    assert.match(help.text, /\n\/addcard ID — добавить вашу карту, которой бот ещё не показывает, по её id в карточном сервисе\n/);
    assert.match(help.text, /реквизиты \(в сообщении, которое удалится через 60 с\)/);
  });

  it('create, top up, withdraw, then Close: refused in words about closing; a stale Freeze redrawn; no English anywhere', async () => {
    const ivan = server.user(9302, { languageCode: 'ru' });
    const menu = await linked(ivan, fake.addUser('current', 100_000));
    const start = server.mark();

    let press = ivan.press(menu, 'Новая карта');
    const bins = await server.nextMessage(ivan.chatId, press.mark, 'Выберите BIN');
    const labels = bins.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];
    assert.ok(labels.includes('531993 · master · для кошельков') && labels.includes('428837 · visa · онлайн'), labels.join(', '));
    press = ivan.press(bins, /428837/);
    press = ivan.press(await server.nextMessage(ivan.chatId, press.mark, 'Выберите тариф'), /Basic/);
    await server.nextMessage(ivan.chatId, press.mark, 'Название карты');
    let step = ivan.send('Реклама');
    press = ivan.press(await server.nextMessage(ivan.chatId, step.mark, 'купон'), 'Пропустить');
    const summary = await server.nextMessage(ivan.chatId, press.mark, 'Стоимость выпуска');
    assert.match(summary.text, /BIN 428837 \(онлайн\)/);
    press = ivan.press(summary, 'Подтвердить');
    const view = await server.nextEdit(ivan.chatId, press.mark, 'выпущена');
    const card = [...fake.cards.values()].find((c) => c.name === 'Реклама')!;

    press = ivan.press(view, 'Пополнить');
    const ask = await server.nextMessage(ivan.chatId, press.mark, 'Сколько зачислить');
    press = ivan.press(ask, 'Другая сумма');
    await server.nextMessage(ivan.chatId, press.mark, 'например 25 или 25,50');
    step = ivan.send('50');
    press = ivan.press(await server.nextMessage(ivan.chatId, step.mark, 'Пополнить «Реклама»'), 'Подтвердить');
    await server.nextEdit(ivan.chatId, press.mark, 'Зачислено');

    press = ivan.press(view, 'Вывести');
    await server.nextMessage(ivan.chatId, press.mark, 'Сколько вывести');
    step = ivan.send('10');
    press = ivan.press(await server.nextMessage(ivan.chatId, step.mark, 'Вывести'), 'Подтвердить');
    await server.nextEdit(ivan.chatId, press.mark, 'Выведено');

    // The bot made the withdrawal: Close says the shared cooldown's wait before Confirm, in words about closing.
    press = ivan.press(view, 'Закрыть карту');
    const refused = await server.nextMessage(ivan.chatId, press.mark, 'Закрыть эту карту');
    assert.match(
      refused.text,
      /^Закрыть эту карту можно будет (через \d.*|в течение 15 минут): карту можно закрыть не раньше чем через 15 минут после последнего вывода\. Ничего не сделано\.$/,
    );
    assert.equal(card.status, 'active');

    // Frozen at the service meanwhile: the view's Freeze redraws it and says so.
    card.status = 'frozen';
    const tap = ivan.press(view, 'Заморозить');
    const answer = await server.waitForCall(
      (c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === tap.queryId,
      tap.mark,
    );
    assert.equal(answer.payload.text, 'Эта карта уже заморожена. Карточка показана такой, какая она сейчас.');
    const redrawn = await server.nextEdit(ivan.chatId, tap.mark, 'Статус: заморожена');
    assert.ok(redrawn.replyMarkup?.inline_keyboard.flat().some((b) => b.text.includes('Разморозить')));

    // The statement: the service's own lines (initial balance, top-up, withdrawal) in Russian.
    press = ivan.press(redrawn, 'Операции');
    const statement = await server.nextEdit(ivan.chatId, press.mark, 'Операции, страница');
    for (const line of ['Пополнение из кошелька', 'Вывод в кошелёк']) assert.ok(statement.text.includes(line), statement.text);

    const seen = server.calls
      .slice(start)
      .filter((c) => Number(c.payload.chat_id) === ivan.chatId && (c.method === 'sendMessage' || c.method === 'editMessageText'))
      .flatMap((c) => [
        String(c.payload.text),
        ...((c.payload.reply_markup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text),
      ]);
    assert.deepEqual(
      seen.filter((text) => ENGLISH.test(text)),
      [],
    );
  });
});
