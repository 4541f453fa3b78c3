import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer, StoredMessage } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

/** Limits and auto top-up are our service's own: in front of another service (remote mode) the card's view offers neither. */
describe('remote mode: no Limits or Auto top-up', { timeout: 60_000 }, () => {
  let bot: RemoteBot;
  let server: BotApiServer;
  let fake: FakeCardService;

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({ serviceUrl: fake.url, logger: createLogger('silent'), settings: { CARD_SERVICE_POLL_SECONDS: '60' } });
    ({ server } = bot);
  });

  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  it('the card view has neither button, and an old Limits button answers that the service has none', async () => {
    const user = server.user(5401, { languageCode: 'ru' });
    const menu = await server.nextMessage(user.chatId, user.send(fake.addUser('current', 100_000)).mark, 'Чат привязан');
    let press = user.press(menu, 'Новая карта');
    press = user.press(await server.nextMessage(user.chatId, press.mark, 'Выберите BIN'), /428837/);
    press = user.press(await server.nextMessage(user.chatId, press.mark, 'Выберите тариф'), /Basic/);
    await server.nextMessage(user.chatId, press.mark, 'Название карты');
    const step = user.send('Реклама');
    press = user.press(await server.nextMessage(user.chatId, step.mark, 'купон'), 'Пропустить');
    press = user.press(await server.nextMessage(user.chatId, press.mark, 'Стоимость выпуска'), 'Подтвердить');
    const view = await server.nextEdit(user.chatId, press.mark, 'выпущена');
    assert.ok(buttons(view).includes('➕ Пополнить'), buttons(view).join(', '));
    assert.ok(!buttons(view).some((b) => b.includes('Лимиты') || b.includes('Автопополнение')), buttons(view).join(', '));

    const card = [...fake.cards.values()].find((c) => c.name === 'Реклама')!;
    const { mark } = user.pressData(view, `k:${card.id}`);
    const answer = await server.waitForCall((c) => c.method === 'answerCallbackQuery', mark, 10_000, 'the answer');
    assert.equal(answer.payload.text, 'У этого сервиса карт нет лимитов и автопополнения.');
  });
});
