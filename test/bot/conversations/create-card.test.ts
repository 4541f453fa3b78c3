import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts, type Harness } from '../harness.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from './kit.js';

async function throughToSummary(h: Harness, chatId: number, coupon?: string) {
  await h.send(textUpdate({ id: chatId }, '/menu'));
  let calls = await h.send(callbackUpdate({ id: chatId }, buttonData(h.calls, 'New card')));
  assert.match(texts(calls).join('\n'), /Pick a BIN/);
  calls = await h.send(callbackUpdate({ id: chatId }, buttonData(calls, /Online/)));
  assert.match(texts(calls).join('\n'), /Pick a plan/);
  const plans = await h.t.core.listPlans();
  const label = `${plans[0]!.name} · limit ${(plans[0]!.limit / 100).toFixed(2)} · fee ${(plans[0]!.creationFee / 100).toFixed(2)}`;
  calls = await h.send(callbackUpdate({ id: chatId }, buttonData(calls, label)));
  assert.match(texts(calls).join('\n'), /Name the card/);
  calls = await h.send(textUpdate({ id: chatId }, 'Travel'));
  assert.match(texts(calls).join('\n'), /coupon/);
  calls = coupon ? await h.send(textUpdate({ id: chatId }, coupon)) : await h.send(callbackUpdate({ id: chatId }, buttonData(calls, 'Skip')));
  return { calls, plan: plans[0]! };
}

describe('the create-card conversation', () => {
  it('goes BIN, plan with limit and fee, name, coupon, summary with the fee and wallet, confirm', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9101, 100_000);
    const { calls, plan } = await throughToSummary(h, 9101);
    const summary = texts(calls).join('\n');
    assert.match(summary, new RegExp(`Creation fee: ${(plan.creationFee / 100).toFixed(2)} USD`));
    assert.match(summary, new RegExp(`Wallet now: 1000\\.00 USD, after the fee: ${((100_000 - plan.creationFee) / 100).toFixed(2)} USD`));
    const done = await h.send(callbackUpdate({ id: 9101 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /Card “Travel” created/);
    assert.equal((await h.t.core.listCards(me.caller)).length, 1);
  });

  it("refuses an unusable coupon in the service's words", async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9102);
    const { calls } = await throughToSummary(h, 9102, 'NOPE');
    const done = await h.send(callbackUpdate({ id: 9102 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /Invalid coupon: .*\. Check the code, or skip the coupon\./);
    assert.equal((await h.t.core.listCards(me.caller)).length, 0);
  });

  it('applies a valid coupon', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9103);
    await h.t.admin.createCoupon({ code: 'HALF', kind: 'percent', value: 5_000 });
    const { calls } = await throughToSummary(h, 9103, 'HALF');
    assert.match(texts(calls).join('\n'), /before coupon HALF/);
    const done = await h.send(callbackUpdate({ id: 9103 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /created/);
    assert.equal((await h.t.core.listCards(me.caller)).length, 1);
  });
});
