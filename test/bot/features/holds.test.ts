import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdNextCall } from '../../helpers/holds.js';
import { catalogue, newCard, newCustomer } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from '../conversations/kit.js';
import { createHarness, texts } from '../harness.js';

/** The labels of the inline buttons the calls drew. */
function buttonsOf(calls: { payload: Record<string, any> }[]): string[] {
  return calls.flatMap((x) => (x.payload.reply_markup?.inline_keyboard ?? []).flat().map((b: { text: string }) => b.text));
}

const CASES = [
  {
    languageCode: 'en',
    wallet: 'Wallet',
    processing: /Status: being issued[\s\S]*creation fee of \$\d+\.\d\d is held until it is ready/,
    listed: /being issued/,
    held: /Held for cards being issued: \$\d+\.\d\d/,
    pending: /Debit \$10\.00 · Pending · Wallet/,
  },
  {
    languageCode: 'ru',
    wallet: 'Кошелёк',
    processing: /Статус: выпускается[\s\S]*плата за выпуск .+ удержана до её готовности/,
    listed: /выпускается/,
    held: /Удержано за выпуск карт: /,
    pending: /Списание .*10,00.* · В обработке · Кошелёк/,
  },
];

describe('holds in chat', () => {
  for (const [i, c] of CASES.entries()) {
    it(`a card being issued and a withdrawal waiting on the provider are shown (${c.languageCode})`, async () => {
      const h = await createHarness();
      const chat = { id: 6601 + i, languageCode: c.languageCode };
      const customer = await newCustomer(h.t, 100_000);
      await h.send(textUpdate(chat, `/link ${customer.token}`));
      const card = await newCard(h.t, customer);
      await h.t.core.topup(customer.caller, card.id, { amount: 5_000 });

      const withdrawal = holdNextCall(h.t, 'withdraw');
      const withdrawn = h.t.core.withdraw(customer.caller, card.id, { amount: 1_000 });
      await withdrawal.reached;
      const issue = holdNextCall(h.t, 'issue');
      const { bin, plan } = await catalogue(h.t);
      const created = h.t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name: 'Travel' });
      await issue.reached;
      const processing = (await h.t.core.listCards(customer.caller)).find((x) => x.status === 'processing')!;
      const menu = await h.send(textUpdate(chat, '/menu'));
      try {
        assert.match(texts(await h.send(callbackUpdate(chat, `t:1:${card.id}`))).join('\n'), c.pending);
        const view = await h.send(callbackUpdate(chat, `c:view:${processing.id}`));
        assert.match(texts(view).join('\n'), c.processing);
        assert.equal(buttonsOf(view).length, 2, 'only its statement and back');
        assert.match(buttonsOf(await h.send(textUpdate(chat, '/cards'))).join('\n'), c.listed);
        assert.match(texts(await h.send(callbackUpdate(chat, buttonData(menu, c.wallet)))).join('\n'), c.held);
      } finally {
        withdrawal.release();
        issue.release();
      }
      await Promise.all([withdrawn, created]);
      assert.doesNotMatch(texts(await h.send(callbackUpdate(chat, `t:1:${card.id}`))).join('\n'), /Pending|В обработке/);
      assert.doesNotMatch(texts(await h.send(callbackUpdate(chat, buttonData(menu, c.wallet)))).join('\n'), c.held);
    });
  }
});
