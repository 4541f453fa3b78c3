import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import type { BotApiServer } from '../helpers/bot-api-server.js';

const BOT_TOKEN = '123456:TEST-token';

/** Dollars as Intl formats them in Russian: "2 050,30 $" (non-breaking spaces). */
const rub = (cents: number) => new Intl.NumberFormat('ru-RU', { style: 'currency', currency: 'USD' }).format(cents / 100);

describe('refusals reach a Russian-speaking user in Russian, over real Bot API traffic', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-refusals', { token: BOT_TOKEN, sensitiveTtlSeconds: 1, otpTtlSeconds: 1 }));
  });

  after(() => e2e?.stop());

  it('a top-up over the wallet, then the cooldown it started, then a freeze of a frozen card: each in Russian, the money as ru-RU', async () => {
    const { token } = await runtime.admin.createUser({ name: 'Olga', deposit: 200_000 });
    const caller = await runtime.core.authenticate(token);
    const bin = (await runtime.core.listBins()).find((b) => !b.wallet)!;
    const plan = (await runtime.core.listPlans()).find((p) => p.name === 'Standard')!;
    const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: 'Реклама' });
    const olga = server.user(2001, { languageCode: 'ru' });

    let step = olga.send(token);
    await server.nextMessage(olga.chatId, step.mark, 'Чат привязан');
    step = olga.send('/cards');
    let press = olga.press(await server.nextMessage(olga.chatId, step.mark, 'Ваши карты'), 'Реклама');
    const view = await server.nextEdit(olga.chatId, press.mark, 'Баланс');

    press = olga.press(view, 'Пополнить');
    const ask = await server.nextMessage(olga.chatId, press.mark, 'Сколько зачислить');
    // What this card can take now (the wallet, fee included), not the service-wide range.
    const canTake = (await runtime.core.quoteTopup(caller, card.id, { amount: 500 })).maxAmount;
    assert.ok(ask.text.includes(`От ${rub(500)} до ${rub(canTake)}.`), ask.text);
    step = olga.send('1');
    const tooSmall = await server.nextMessage(olga.chatId, step.mark);
    assert.equal(tooSmall.text, `Минимальная сумма — ${rub(500)}. Пришлите сумму, например 25 или 25,50, или /cancel.`);

    // More than the wallet holds once the platform fee is added: refused at the quote, with the most that
    // works, every figure in ru-RU, and no Confirm button.
    step = olga.send('2000');
    const refused = await server.nextMessage(olga.chatId, step.mark, 'Недостаточно средств');
    const expected = await runtime.core.quoteTopup(caller, card.id, { amount: 200_000 });
    assert.equal(
      refused.text,
      `Недостаточно средств в кошельке. Нужно: ${rub(expected.totalCharged)} (пополнение ${rub(200_000)} + комиссия платформы ` +
        `${rub(expected.platformFee)}), доступно: ${rub(expected.walletBalance)}\n` +
        `Сейчас можно зачислить не больше ${rub(expected.maxAmount)}. Выберите или введите другую сумму, или /cancel.`,
    );
    assert.match(refused.text, /2\u00a0050,30\u00a0\$/, 'grouped and with a decimal comma, as ru-RU writes money');
    assert.ok(!JSON.stringify(refused.replyMarkup ?? {}).includes('Подтвердить'));

    // That refusal started no cooldown: a smaller amount goes through; the cooldown it starts is then said
    // with the time left, before any amount is asked.
    step = olga.send('10');
    press = olga.press(await server.nextMessage(olga.chatId, step.mark, 'Комиссия платформы'), 'Подтвердить');
    await server.nextEdit(olga.chatId, press.mark, 'Зачислено');
    press = olga.press(view, 'Пополнить');
    const cooldown = await server.nextMessage(olga.chatId, press.mark, 'Подождите');
    assert.match(cooldown.text, /^Подождите (1 мин \d{1,2} с|2 мин), прежде чем снова пополнять эту карту\. Попробуйте после этого\.$/);

    // A Freeze under a view that still says active, the card frozen meanwhile: the view is redrawn as the card is,
    // and the button's answer says why, in Russian.
    await runtime.core.freeze(caller, card.id);
    const tap = olga.pressData(view, `c:freeze:${card.id}`);
    const answer = await server.waitForCall(
      (c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === tap.queryId,
      tap.mark,
    );
    assert.equal(answer.payload.text, 'Эта карта уже заморожена. Карточка показана такой, какая она сейчас.');
    await server.nextEdit(olga.chatId, tap.mark, 'Статус: заморожена');

    assert.deepEqual(
      server.calls.filter((c) => !c.ok).map((c) => `${c.method}: ${c.error}`),
      [],
    );
    assert.deepEqual(server.unansweredQueries(), []);
  });
});
