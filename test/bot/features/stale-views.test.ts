import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CardServiceError } from '../../../src/core/rules/errors.js';
import { startBackgroundJobs } from '../../../src/bot/jobs/background-jobs.js';
import { createHarness, texts, type ApiCall } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from '../conversations/kit.js';

// Issue 31, item 7: a stale screen is redrawn, never believed; a refusal that ends a flow says so; an alert keeps no
// Freeze button that leads nowhere.

const answerOf = (calls: ApiCall[]) => String(calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text);
const editOf = (calls: ApiCall[], messageId: number) =>
  calls.find((c) => c.method === 'editMessageText' && c.payload.message_id === messageId);
const labelsOf = (call: ApiCall | undefined) =>
  ((call?.payload.reply_markup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

describe('a stale card view is redrawn from the card, never believed', () => {
  it("Top up under a closed card's older view: the view redrawn as closed, the answer says so, no flow (not a cooldown)", async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7101);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 2_000 });
    // Closed a minute after a top-up: the top-up cooldown still runs, and must not be what the press is told.
    h.t.clock.advance(60_000);
    await h.t.core.close(me.caller, card.id);
    const calls = await h.send(callbackUpdate({ id: 7101 }, `c:topup:${card.id}`, 77));
    assert.equal(answerOf(calls), 'This card is closed. Its view now shows it as it is.');
    const redrawn = editOf(calls, 77);
    assert.match(String(redrawn?.payload.text), /Status: closed/);
    assert.doesNotMatch(labelsOf(redrawn).join(' '), /Top up|Withdraw|Freeze|Close card/);
    assert.doesNotMatch(texts(calls).join('\n'), /Please wait|How much/);
    // Nothing waits for an amount: a typed one is not taken as one.
    assert.doesNotMatch(texts(await h.send(textUpdate({ id: 7101 }, '10'))).join('\n'), /Top-up|fee/);
  });

  it('Unfreeze under an older view of a card active again, and Withdraw or Close on a closed one, each redraw it', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7102, 100_000);
    const card = await newCard(h.t, me);
    await h.t.core.freeze(me.caller, card.id);
    await h.t.core.unfreeze(me.caller, card.id);
    let calls = await h.send(callbackUpdate({ id: 7102, languageCode: 'ru' }, `c:unfreeze:${card.id}`, 78));
    assert.equal(answerOf(calls), 'Эта карта уже активна. Карточка показана такой, какая она сейчас.');
    assert.match(String(editOf(calls, 78)?.payload.text), /Статус: активна/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'active');
    await h.t.core.close(me.caller, card.id);
    for (const action of ['withdraw', 'close', 'freeze', 'details']) {
      calls = await h.send(callbackUpdate({ id: 7102 }, `c:${action}:${card.id}`, 79));
      assert.equal(answerOf(calls), 'This card is closed. Its view now shows it as it is.', action);
      assert.match(String(editOf(calls, 79)?.payload.text), /Status: closed/, action);
      assert.equal(calls.filter((c) => c.method === 'sendMessage').length, 0, `${action}: nothing else said`);
    }
  });

  it("a Freeze under an alert for a card frozen since: answered, the alert's button taken off, the card shown as it is", async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7103);
    const card = await newCard(h.t, me);
    await h.t.core.freeze(me.caller, card.id);
    const calls = await h.send(callbackUpdate({ id: 7103 }, `c:alertfreeze:${card.id}`, 80, '💸 Debit $5.00 at Shop'));
    assert.equal(answerOf(calls), 'This card is already frozen. Its view now shows it as it is.');
    assert.ok(
      calls.some(
        (c) => c.method === 'editMessageReplyMarkup' && c.payload.message_id === 80 && !c.payload.reply_markup?.inline_keyboard?.length,
      ),
    );
    const view = calls.find((c) => c.method === 'sendMessage');
    assert.match(String(view?.payload.text), /Status: frozen/);
    assert.ok(labelsOf(view).includes('🔥 Unfreeze'));
    assert.equal(editOf(calls, 80), undefined, 'the alert itself is kept as it was');
  });

  it('an alert for a purchase declined on a closed card offers the card, not Freeze', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7104);
    const card = await newCard(h.t, me);
    await h.t.core.close(me.caller, card.id);
    const jobs = startBackgroundJobs(h.bot);
    const mark = h.calls.length;
    await h.t.admin.simulatePurchase(card.id, 500, 'Bakery');
    const alert = await h.waitFor((c) => c.method === 'sendMessage' && String(c.payload.text).includes('Bakery'), mark);
    await jobs.stop();
    assert.match(String(alert.payload.text), /Declined .* the card is closed/);
    assert.deepEqual(labelsOf(alert), ['💳 Open the card']);
  });
});

describe('a refusal that ends a flow says so', () => {
  it('a top-up refused after Confirm for the limit, in Russian: the hint no longer invites typing into the ended flow', async () => {
    const refusal = new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit: 90_000, limit: 100_000, available: 10_000 });
    const h = await createHarness({ core: { topup: async () => Promise.reject(refusal) } });
    const me = await h.linkedCustomer(7105);
    const card = await newCard(h.t, me);
    const ru = { id: 7105, languageCode: 'ru' };
    let calls = await h.send(textUpdate(ru, '/topup 50'));
    calls = await h.send(callbackUpdate(ru, buttonData(calls, 'Подтвердить')));
    const refused = texts(calls).join('\n');
    assert.match(
      refused,
      /^Пополнение превысит лимит карты\. Уже внесено: .*\. Ничего не сделано, это пополнение завершено: чтобы зачислить меньше, снова нажмите «Пополнить»\.$/,
    );
    assert.doesNotMatch(refused, /Введите меньшую сумму/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 0);
  });

  it('a top-up that nothing fits any more ends saying so, without a hint to type a smaller amount', async () => {
    // The first quote (before the amount is asked) finds room; by the time the amount comes, none is left.
    let quotes = 0;
    const h = await createHarness({
      core: {
        async quoteTopup(caller, cardId, input) {
          const quote = await h.t.core.quoteTopup(caller, cardId, input);
          quotes += 1;
          if (quotes === 1) return quote;
          const refusal = new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit: 99_800, limit: 100_000, available: 200 }).toPlain();
          return { ...quote, maxAmount: 200, depositAvailable: 200, refusal };
        },
      },
    });
    const me = await h.linkedCustomer(7106);
    const card = await newCard(h.t, me);
    const ru = { id: 7106, languageCode: 'ru' };
    assert.match(texts(await h.send(callbackUpdate(ru, `c:topup:${card.id}`, 81))).join('\n'), /Сколько зачислить/);
    const text = texts(await h.send(textUpdate(ru, '50'))).join('\n');
    assert.match(text, /^Пополнение превысит лимит карты\. .*\nСейчас ничего нельзя зачислить: наименьшее пополнение — 5,00\s\$\.$/);
    assert.doesNotMatch(text, /Введите меньшую сумму|снова нажмите/);
  });
});
