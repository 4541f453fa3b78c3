import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startBackgroundJobs } from '../../src/bot/jobs/background-jobs.js';
import type { CardService } from '../../src/core/service.js';
import { createHarness, type ApiCall } from './harness.js';
import { newCustomer } from '../helpers/core.js';
import { callbackUpdate, textUpdate } from '../helpers/updates.js';
import { buttonData } from './conversations/kit.js';

// Issue 31, item 8: Russian is complete. The words the bot used to show in English inside a Russian chat: the BIN
// categories, the statement lines the card service writes itself (ours and other services'), the amount example's
// decimal point; and an OTP with no merchant reads as a sentence (`at —` before), in both languages.
const ENGLISH = /\b(Online|Wallet|Initial balance|Withdrawal to wallet|Card closure|top-up|Debit|Credit)\b|at —|25\.50/i;

/** Every text and button label the calls carried. */
const words = (calls: ApiCall[]) =>
  calls.flatMap((c) => [
    ...(c.payload.text === undefined ? [] : [String(c.payload.text)]),
    ...((c.payload.reply_markup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text),
  ]);

/** Statement lines as another card service writes them for its own movements (remote mode). */
const REMOTE_LINES = [
  { merchantName: 'Withdrawal to wallet', side: 'Debit', type: 'withdrawal' },
  { merchantName: 'Card closure', side: 'Debit', type: 'card_close' },
] as const;

describe('Russian is complete', () => {
  it('a Russian chat sees none of the English words: create, top-up, statement (ours and a remote one), OTPs', async () => {
    let listTransactions: CardService['listTransactions'] | undefined;
    const h = await createHarness({
      core: {
        // The statement as the core gives it, with two lines another service would write beside ours.
        listTransactions: async (caller, query) => {
          const page = await listTransactions!(caller, query);
          const [first] = page.data;
          const remote = first ? REMOTE_LINES.map((line, i) => ({ ...first, ...line, id: `remote-${i}` })) : [];
          return { ...page, data: [...page.data, ...remote] };
        },
      },
    });
    listTransactions = h.t.core.listTransactions.bind(h.t.core);
    const me = await newCustomer(h.t, 100_000, 'Olga');
    const ru = { id: 7301, languageCode: 'ru' };
    const en = { id: 7302 };
    await h.send(textUpdate(ru, `/link ${me.token}`));
    await h.send(textUpdate(en, `/link ${me.token}`));
    const mark = h.calls.length;

    // Create: the BIN list and the summary name the categories.
    await h.send(textUpdate(ru, '/menu'));
    let calls = await h.send(callbackUpdate(ru, buttonData(h.calls, 'Новая карта')));
    assert.match(words(calls).join('\n'), /414720 · visa · для кошельков/);
    assert.match(words(calls).join('\n'), /424242 · visa · онлайн/);
    calls = await h.send(callbackUpdate(ru, buttonData(calls, /414720/)));
    calls = await h.send(callbackUpdate(ru, buttonData(calls, /Basic/)));
    calls = await h.send(textUpdate(ru, 'Поездки'));
    calls = await h.send(callbackUpdate(ru, buttonData(calls, 'Пропустить')));
    assert.match(words(calls).join('\n'), /BIN 414720 \(для кошельков\)/);
    await h.send(callbackUpdate(ru, buttonData(calls, 'Подтвердить')));
    const [card] = await h.t.core.listCards(me.caller);
    assert.ok(card);

    // Top-up: "Other amount" asks with an example in the Russian decimal mark; the quote names the category.
    calls = await h.send(textUpdate(ru, '/topup'));
    calls = await h.send(callbackUpdate(ru, buttonData(calls, 'Другая сумма')));
    assert.match(words(calls).join('\n'), /например 25 или 25,50/);
    calls = await h.send(textUpdate(ru, '25,50'));
    assert.match(words(calls).join('\n'), /Комиссия платформы \(для кошельков\)/);
    await h.send(callbackUpdate(ru, buttonData(calls, 'Подтвердить')));
    await h.t.core.withdraw(me.caller, card.id, { amount: 500 });

    // The statement: the initial balance, the top-up and the withdrawal the core wrote, and the remote service's lines.
    calls = await h.send(callbackUpdate(ru, `t:1:${card.id}`));
    const statement = words(calls).join('\n');
    for (const line of ['Начальный баланс', 'Пополнение из кошелька', 'Кошелёк', 'Вывод в кошелёк', 'Закрытие карты'])
      assert.ok(statement.includes(line), `${line} in:\n${statement}`);

    // OTPs with no merchant (one asked by e-mail has no amount either), pushed and listed.
    const jobs = startBackgroundJobs(h.bot);
    const pushed = (chatId: number, code: string) =>
      h.waitFor((c) => c.method === 'sendMessage' && c.payload.chat_id === chatId && String(c.payload.text).includes(code), mark);
    // One at a time, each pushed before the next comes (several waiting together go as one message).
    const bare = await h.t.admin.simulateOtp(card.id, 0, '');
    const bareTo = await Promise.all([pushed(7301, bare.code), pushed(7302, bare.code)]);
    const paid = await h.t.admin.simulateOtp(card.id, 1_500, '');
    const paidTo = await Promise.all([pushed(7301, paid.code), pushed(7302, paid.code)]);
    await jobs.stop();
    const pushes = [bareTo[0], paidTo[0], bareTo[1], paidTo[1]];
    const [ruBare, ruPaid, enBare, enPaid] = pushes.map((c) => String(c.payload.text));
    assert.match(ruBare!, new RegExp(`^🔑 OTP ${bare.code} для «Поездки» \\([^)]+\\)\\. Удалится через 60 с\\.$`));
    assert.match(ruPaid!, new RegExp(`^🔑 OTP ${paid.code} для «Поездки» \\([^)]+\\): платёж на 15,00\\s\\$\\. Удалится через 60 с\\.$`));
    assert.match(enBare!, new RegExp(`^🔑 OTP ${bare.code} for “Поездки” \\([^)]+\\)\\. Deleted in 60 s\\.$`));
    assert.match(enPaid!, new RegExp(`^🔑 OTP ${paid.code} for “Поездки” \\([^)]+\\): a payment of \\$15\\.00\\. Deleted in 60 s\\.$`));
    calls = await h.send(callbackUpdate(ru, `c:otps:${card.id}`));
    assert.match(words(calls).join('\n'), new RegExp(`${bare.code} · \\d`), 'a listed OTP without merchant or amount: its code and time');

    const russian = words(h.since(mark).filter((c) => c.payload.chat_id === 7301));
    const english = russian.filter((text) => ENGLISH.test(text));
    assert.deepEqual(english, [], 'English words in the Russian chat');
  });
});
