import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from './kit.js';

describe('the withdraw and close conversations', () => {
  it('withdraws after a confirm and refuses more than the card holds', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9201);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    let calls = await h.send(callbackUpdate({ id: 9201 }, `c:withdraw:${card.id}`, 5));
    assert.match(texts(calls).join('\n'), /balance \$30\.00\)\? From \$1\.00 to \$10,000\.00/);
    calls = await h.send(textUpdate({ id: 9201 }, '0.5'));
    assert.match(texts(calls).join('\n'), /Minimum amount is \$1\.00/);
    calls = await h.send(textUpdate({ id: 9201 }, '40'));
    calls = await h.send(callbackUpdate({ id: 9201 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Insufficient card balance\. Available: \$30\.00, Requested: \$40\.00\. Try a smaller amount\./);

    h.t.clock.advance(16 * 60_000);
    await h.send(callbackUpdate({ id: 9201 }, `c:withdraw:${card.id}`, 5));
    calls = await h.send(textUpdate({ id: 9201 }, '10'));
    calls = await h.send(callbackUpdate({ id: 9201 }, buttonData(calls, 'Confirm')));
    assert.match(texts(calls).join('\n'), /Withdrew \$10\.00\. Card balance: \$20\.00/);
    const redraw = calls.find((c) => c.method === 'editMessageText' && c.payload.message_id === 5);
    assert.match(String(redraw?.payload.text), /Balance: \$20\.00/);
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
