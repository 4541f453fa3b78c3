import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from './kit.js';

describe('the withdraw and close conversations', () => {
  it('refuses more than the card holds at the amount step, with the most that works, starting no cooldown', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9201);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    let calls = await h.send(callbackUpdate({ id: 9201 }, `c:withdraw:${card.id}`, 5));
    assert.match(texts(calls).join('\n'), /balance \$30\.00\)\? From \$1\.00 to \$30\.00/);
    calls = await h.send(textUpdate({ id: 9201 }, '0.5'));
    assert.match(texts(calls).join('\n'), /Minimum amount is \$1\.00/);
    calls = await h.send(textUpdate({ id: 9201 }, '40'));
    const refused = texts(calls).join('\n');
    assert.match(refused, /Insufficient card balance\. Available: \$30\.00, Requested: \$40\.00/);
    assert.match(refused, /The most you can withdraw now is \$30\.00/);
    assert.throws(() => buttonData(calls, 'Confirm'), 'no Confirm for what the service would refuse');

    // No cooldown started: the next amount goes through at once.
    calls = await h.send(textUpdate({ id: 9201 }, '10'));
    calls = await h.send(callbackUpdate({ id: 9201 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Withdrew \$10\.00\. Card balance: \$20\.00/);
    const redraw = calls.find((c) => c.method === 'editMessageText' && c.payload.message_id === 5);
    assert.match(String(redraw?.payload.text), /Balance: \$20\.00/);
  });

  it('offers presets within what the card holds and "All", which takes the whole balance', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9204);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    let calls = await h.send(callbackUpdate({ id: 9204 }, `c:withdraw:${card.id}`, 6));
    const labels = calls.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat()).map((b: { text: string }) => b.text);
    assert.deepEqual(labels, ['$10.00', '$25.00', 'All ($30.00)', '✏️ Other amount']);
    calls = await h.send(callbackUpdate({ id: 9204 }, buttonData(calls, 'All')));
    assert.match(texts(calls).join('\n'), /Withdraw \$30\.00 from/);
    calls = await h.send(callbackUpdate({ id: 9204 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Withdrew \$30\.00\. Card balance: \$0\.00/);
  });

  it('says a card inside its withdrawal cooldown must wait, with the seconds left, before any amount', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9203);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    await h.t.core.withdraw(me.caller, card.id, { amount: 500 });
    h.t.clock.advance(60_000);
    const calls = await h.send(callbackUpdate({ id: 9203 }, `c:withdraw:${card.id}`));
    const text = texts(calls).join('\n');
    assert.match(text, /Please wait 15 minutes between withdrawals \(the next one in 14 min\)/, text);
    assert.doesNotMatch(text, /How much to withdraw/);
  });

  it('says a card with nothing to withdraw has nothing, and asks no amount', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9204);
    const card = await newCard(h.t, me);
    const calls = await h.send(callbackUpdate({ id: 9204 }, `c:withdraw:${card.id}`));
    const text = texts(calls).join('\n');
    assert.match(text, /“Ads” has nothing to withdraw: its balance is \$0\.00/);
    assert.doesNotMatch(text, /How much to withdraw/);
    const after = await h.send(textUpdate({ id: 9204 }, '10'));
    assert.doesNotMatch(texts(after).join('\n'), /Withdraw \$10/);
  });

  it('warns that closing is irreversible, with the balance that returns, and closes on confirm only', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9202);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 2_500 });
    let calls = await h.send(callbackUpdate({ id: 9202 }, `c:close:${card.id}`));
    assert.match(texts(calls).join('\n'), /cannot be undone\. The balance of \$25\.00 returns to your wallet/);
    calls = await h.send(callbackUpdate({ id: 9202 }, buttonData(calls, 'Cancel')));
    assert.match(texts(calls).join('\n'), /Cancelled/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'active');

    calls = await h.send(callbackUpdate({ id: 9202 }, `c:close:${card.id}`));
    calls = await h.send(callbackUpdate({ id: 9202 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Card closed\. \$25\.00 returned/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'closed');
  });

  it('Close after a withdrawal says the wait before any Confirm, in words about closing, in English and in Russian', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9205);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    await h.t.core.withdraw(me.caller, card.id, { amount: 500 });
    h.t.clock.advance(3 * 60_000);
    let calls = await h.send(callbackUpdate({ id: 9205 }, `c:close:${card.id}`, 31));
    assert.deepEqual(texts(calls), [
      'You can close this card in 12 min: a card can be closed 15 minutes after its last withdrawal. Nothing was done.',
    ]);
    assert.throws(() => buttonData(calls, 'Confirm'), 'no Confirm for a close that would be refused');
    calls = await h.send(callbackUpdate({ id: 9205, languageCode: 'ru' }, `c:close:${card.id}`, 31));
    assert.deepEqual(texts(calls), [
      'Закрыть эту карту можно будет через 12 мин: карту можно закрыть не раньше чем через 15 минут после последнего вывода. Ничего не сделано.',
    ]);
    // Once it has passed, Close asks as before.
    h.t.clock.advance(12 * 60_000);
    calls = await h.send(callbackUpdate({ id: 9205 }, `c:close:${card.id}`, 31));
    calls = await h.send(callbackUpdate({ id: 9205 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Card closed\. \$25\.00 returned/);
  });

  it('a service that quotes no withdrawal: the cooldown refusal after Confirm is worded about closing', async () => {
    // As in remote mode: no quote, so the wait is known only from the refusal.
    const h = await createHarness({ core: { quoteWithdrawal: (async () => undefined) as never } });
    const me = await h.linkedCustomer(9206);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    await h.t.core.withdraw(me.caller, card.id, { amount: 500 });
    let calls = await h.send(callbackUpdate({ id: 9206 }, `c:close:${card.id}`, 32));
    calls = await h.send(callbackUpdate({ id: 9206 }, buttonData(calls, 'Confirm')));
    assert.deepEqual(texts(calls), [
      'You can close this card within 15 minutes: a card can be closed 15 minutes after its last withdrawal. Nothing was done.',
    ]);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'active');
  });

  it('a flow left idle expires: the late answer is told so and does nothing', async () => {
    const h = await createHarness({ config: { conversationIdleMs: 60_000 } });
    const me = await h.linkedCustomer(9203);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 9203 }, `c:topup:${card.id}`));
    h.t.clock.advance(61_000);
    let calls = await h.send(textUpdate({ id: 9203 }, '50'));
    assert.deepEqual(texts(calls), ['This step waited more than 1 min and has expired; nothing was done. Start again from /menu.']);
    // The flow is gone: the next text is not taken as an amount.
    calls = await h.send(textUpdate({ id: 9203 }, '50'));
    assert.doesNotMatch(texts(calls).join('\n'), /Platform fee/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 0);
  });

  it('a flow answered in time goes on', async () => {
    const h = await createHarness({ config: { conversationIdleMs: 60_000 } });
    const me = await h.linkedCustomer(9204);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 9204 }, `c:topup:${card.id}`));
    h.t.clock.advance(59_000);
    const calls = await h.send(textUpdate({ id: 9204 }, '50'));
    assert.match(texts(calls).join('\n'), /Platform fee/);
  });
});
