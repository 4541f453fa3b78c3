import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buttonData } from '../conversations/kit.js';
import { createHarness, texts } from '../harness.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';

describe('the main menu', () => {
  it('has Wallet, My cards, Top up a card, Add money, New card, Transactions, OTPs and Help, and each answers', async () => {
    const h = await createHarness();
    await h.linkedCustomer(6101, 12_345);
    const menu = await h.send(textUpdate({ id: 6101 }, '/menu'));
    const labels = menu.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat().map((b: { text: string }) => b.text));
    assert.deepEqual(labels, [
      '💰 Wallet',
      '💳 My cards',
      '⬆️ Top up a card',
      '💵 Add money',
      '➕ New card',
      '📜 Transactions',
      '🔑 OTPs',
      '❓ Help',
    ]);
    const expected: [string, RegExp][] = [
      ['Wallet', /Wallet balance: \$123\.45/],
      ['My cards', /no cards yet/],
      ['Top up a card', /no cards yet/],
      ['Add money', /Add money to your wallet: from \$5\.00 to \$10,000\.00/],
      ['New card', /Pick a BIN/],
      ['Transactions', /No transactions/],
      ['OTPs', /no cards yet/],
      ['Help', /\/details — a card's details\n\/deposit — ask for money in your wallet\n\/cancel — leave the current step/],
    ];
    for (const [label, text] of expected) {
      const calls = await h.send(callbackUpdate({ id: 6101 }, buttonData(menu, label)));
      assert.match(texts(calls).join('\n'), text, label);
      assert.equal(calls.filter((c) => c.method === 'answerCallbackQuery').length, 1, `${label}: answered once`);
      await h.send(textUpdate({ id: 6101 }, '/cancel'));
    }
  });

  it('answers a press on a menu drawn with another layout as expired, redraws it, and runs nothing', async () => {
    const h = await createHarness();
    await h.linkedCustomer(6102, 12_345);
    const menu = await h.send(textUpdate({ id: 6102 }, '/menu'));
    const wallet = buttonData(menu, 'Wallet');
    const stale = wallet.replace(/\/f[^/]*$/, '/fstale');
    assert.notEqual(stale, wallet);
    const calls = await h.send(callbackUpdate({ id: 6102 }, stale));
    const answer = calls.find((c) => c.method === 'answerCallbackQuery');
    assert.equal(answer?.payload.text, 'This button has expired. Open the menu again: /menu');
    assert.ok(
      calls.some((c) => c.method === 'editMessageReplyMarkup'),
      'the menu is drawn again',
    );
    assert.doesNotMatch(texts(calls).join('\n'), /Wallet balance/);
  });

  it('still runs a button whose press Telegram finds too old to answer, and says nothing of it in chat', async () => {
    let refuseAnswers = false;
    const h = await createHarness({
      failCall: (method) =>
        refuseAnswers && method === 'answerCallbackQuery'
          ? { code: 400, description: 'Bad Request: query is too old and response timeout expired or query ID is invalid' }
          : undefined,
    });
    await h.linkedCustomer(6103, 12_345);
    const menu = await h.send(textUpdate({ id: 6103 }, '/menu'));
    refuseAnswers = true;
    for (const [label, text] of [
      ['Wallet', /Wallet balance: \$123\.45/],
      ['New card', /Pick a BIN/],
    ] as const) {
      const calls = await h.send(callbackUpdate({ id: 6103 }, buttonData(menu, label)));
      assert.match(texts(calls).join('\n'), text, label);
      assert.doesNotMatch(texts(calls).join('\n'), /went wrong/, label);
    }
    assert.match(h.log(), /Telegram refused to answer a button press/);
  });
});
