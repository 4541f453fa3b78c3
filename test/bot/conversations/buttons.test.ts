import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts, type ApiCall, type Harness } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from './kit.js';

/** The id the fake Telegram gave the message `call` sent (it numbers new messages in order). */
function sentId(h: Harness, call: ApiCall): number {
  const index = h.calls.indexOf(call);
  assert.ok(index >= 0 && call.method === 'sendMessage');
  return (
    1 +
    h.calls
      .slice(0, index)
      .filter((c) => c.method === 'sendMessage' || (c.method === 'editMessageText' && c.payload.message_id === undefined)).length
  );
}

/** The last message sent in `calls` that carried flow buttons (`v:` callback data). */
function lastWithButtons(calls: ApiCall[]): ApiCall {
  const found = calls.filter(
    (c) =>
      c.method === 'sendMessage' &&
      (c.payload.reply_markup?.inline_keyboard ?? []).flat().some((b: { callback_data?: string }) => b.callback_data?.startsWith('v:')),
  );
  assert.ok(found.length > 0, 'no message with flow buttons');
  return found.at(-1)!;
}

/** Whether `calls` took the buttons off message `messageId` in chat `chatId`. */
const takenOff = (calls: ApiCall[], chatId: number, messageId: number) =>
  calls.some(
    (c) =>
      c.method === 'editMessageReplyMarkup' &&
      c.payload.chat_id === chatId &&
      c.payload.message_id === messageId &&
      !c.payload.reply_markup?.inline_keyboard?.length,
  );

describe('a flow that ends takes its own buttons off', () => {
  it('expired: the waiting preset buttons go with the notice', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7701);
    const card = await newCard(h.t, me);
    const prompt = lastWithButtons(await h.send(callbackUpdate({ id: 7701 }, `c:topup:${card.id}`, 7)));
    h.t.clock.advance(11 * 60_000);
    const calls = await h.send(textUpdate({ id: 7701 }, '50'));
    assert.match(texts(calls).join('\n'), /expired/i);
    assert.ok(takenOff(calls, 7701, sentId(h, prompt)));
  });

  it('an amount typed instead of pressed spends the presets; /cancel takes the confirm buttons off', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7702);
    const card = await newCard(h.t, me);
    const prompt = lastWithButtons(await h.send(callbackUpdate({ id: 7702 }, `c:topup:${card.id}`, 7)));
    let calls = await h.send(textUpdate({ id: 7702 }, '50'));
    assert.ok(takenOff(calls, 7702, sentId(h, prompt)));
    const quote = lastWithButtons(calls);
    calls = await h.send(textUpdate({ id: 7702 }, '/cancel'));
    assert.match(texts(calls).join('\n'), /Cancelled/i);
    assert.ok(takenOff(calls, 7702, sentId(h, quote)));
    // Nothing is left to take off: a second /cancel edits nothing.
    calls = await h.send(textUpdate({ id: 7702 }, '/cancel'));
    assert.equal(calls.filter((c) => c.method === 'editMessageReplyMarkup').length, 0);
  });

  it('another flow started takes the buttons of the one that was waiting off', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7703);
    const card = await newCard(h.t, me);
    const funded = await newCard(h.t, me, 'Travel');
    await h.t.core.topup(me.caller, funded.id, { amount: 2_000 });
    const prompt = lastWithButtons(await h.send(callbackUpdate({ id: 7703 }, `c:topup:${card.id}`, 7)));
    const calls = await h.send(callbackUpdate({ id: 7703 }, `c:withdraw:${funded.id}`, 8));
    assert.match(texts(calls).join('\n'), /How much to withdraw from “Travel”/);
    assert.ok(takenOff(calls, 7703, sentId(h, prompt)));
  });
});

describe('fewer taps', () => {
  it('transactions opened from a card have a button back to that card', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7711);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 1_000 });
    await h.t.admin.simulatePurchase(card.id, 100, 'Shop');
    let calls = await h.send(callbackUpdate({ id: 7711 }, `t:1:${card.id}`));
    assert.equal(buttonData(calls, 'Back to card'), `c:view:${card.id}`);
    calls = await h.send(callbackUpdate({ id: 7711 }, buttonData(calls, 'Back to card')));
    assert.match(texts(calls).join('\n'), /Ads/);
    calls = await h.send(callbackUpdate({ id: 7711 }, 't:1:*'));
    assert.throws(() => buttonData(calls, 'Back to card'), 'the list of all cards has none');
  });

  it('the card last used is offered first in the pickers', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7712);
    const first = await newCard(h.t, me);
    const travel = await newCard(h.t, me, 'Travel');
    const firstButton = (calls: ApiCall[]) =>
      calls.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat())[0]?.callback_data;
    assert.equal(firstButton(await h.send(textUpdate({ id: 7712 }, '/topup'))), `c:topup:${first.id}`);
    await h.send(callbackUpdate({ id: 7712 }, `c:view:${travel.id}`));
    for (const command of ['topup', 'freeze', 'details', 'cards']) {
      const action = command === 'cards' ? 'view' : command;
      assert.equal(firstButton(await h.send(textUpdate({ id: 7712 }, `/${command}`))), `c:${action}:${travel.id}`, command);
    }
    // Another chat keeps its own.
    await h.send(textUpdate({ id: 7713 }, `/link ${me.token}`));
    assert.equal(firstButton(await h.send(textUpdate({ id: 7713 }, '/topup'))), `c:topup:${first.id}`);
  });
});
