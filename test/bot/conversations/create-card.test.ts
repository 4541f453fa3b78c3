import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts, type Harness } from '../harness.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData, usd } from './kit.js';
import type { CardService } from '../../../src/core/service.js';

async function throughToSummary(h: Harness, chatId: number, coupon?: string) {
  await h.send(textUpdate({ id: chatId }, '/menu'));
  let calls = await h.send(callbackUpdate({ id: chatId }, buttonData(h.calls, 'New card')));
  assert.match(texts(calls).join('\n'), /Pick a BIN/);
  calls = await h.send(callbackUpdate({ id: chatId }, buttonData(calls, /Online/)));
  assert.match(texts(calls).join('\n'), /Pick a plan/);
  const plans = await h.t.core.listPlans();
  const label = `${plans[0]!.name} · limit ${usd(plans[0]!.limit)} · fee ${usd(plans[0]!.creationFee)}`;
  calls = await h.send(callbackUpdate({ id: chatId }, buttonData(calls, label)));
  assert.match(texts(calls).join('\n'), /Name the card/);
  calls = await h.send(textUpdate({ id: chatId }, 'Travel'));
  assert.match(texts(calls).join('\n'), /coupon/);
  calls = coupon
    ? await h.send(textUpdate({ id: chatId }, coupon))
    : await h.send(callbackUpdate({ id: chatId }, buttonData(calls, 'Skip')));
  return { calls, plan: plans[0]! };
}

describe('the create-card conversation', () => {
  it('goes BIN, plan with limit and fee, name, coupon, summary with the fee and wallet, confirm', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9101, 100_000);
    const { calls, plan } = await throughToSummary(h, 9101);
    const summary = texts(calls).join('\n');
    assert.ok(summary.includes(`Creation fee: ${usd(plan.creationFee)}`), summary);
    assert.ok(summary.includes(`Wallet now: $1,000.00, after the fee: ${usd(100_000 - plan.creationFee)}`), summary);
    const done = await h.send(callbackUpdate({ id: 9101 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /Card “Travel” created/);
    assert.equal((await h.t.core.listCards(me.caller)).length, 1);
  });

  it('the type is chosen on the summary: multi-use unless tapped, redrawn in place, created as chosen', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9111, 100_000);
    const { calls } = await throughToSummary(h, 9111);
    assert.match(texts(calls).join('\n'), /Type: multi-use/);
    const chosen = await h.send(callbackUpdate({ id: 9111 }, buttonData(calls, 'Single-use')));
    const redrawn = chosen.find((c) => c.method === 'editMessageText');
    assert.match(String(redrawn?.payload.text), /Type: single-use, closed after its first purchase/);
    const done = await h.send(callbackUpdate({ id: 9111 }, buttonData(chosen, 'Confirm')));
    assert.match(texts(done).join('\n'), /Card “Travel” created/);
    const [card] = await h.t.core.listCards(me.caller);
    assert.equal(
      (await h.t.database.db.selectFrom('cards').select('type').where('id', '=', card!.id).executeTakeFirstOrThrow()).type,
      'single_use',
    );
  });

  it('with a service that gives no creation quote, the summary shows the plan’s fee against the wallet', async () => {
    const h = await createHarness({ core: { quoteCreateCard: async () => undefined } as unknown as Partial<CardService> });
    const me = await h.linkedCustomer(9110, 100_000);
    const { calls, plan } = await throughToSummary(h, 9110);
    const summary = texts(calls).join('\n');
    assert.ok(summary.includes(`Creation fee: ${usd(plan.creationFee)}`), summary);
    assert.ok(summary.includes(`Wallet now: $1,000.00, after the fee: ${usd(100_000 - plan.creationFee)}`), summary);
    const done = await h.send(callbackUpdate({ id: 9110 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /Card “Travel” created/);
    assert.equal((await h.t.core.listCards(me.caller)).length, 1);
  });

  it("refuses an unusable coupon as it is typed, in the service's words, and asks again", async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9102);
    const { calls } = await throughToSummary(h, 9102, 'NOPE');
    assert.match(texts(calls).join('\n'), /Invalid coupon: coupon not found\. Check the code, or skip the coupon\./);
    assert.doesNotMatch(texts(calls).join('\n'), /Creation fee/);
    const skipped = await h.send(callbackUpdate({ id: 9102 }, buttonData(calls, 'Skip')));
    assert.match(texts(skipped).join('\n'), /Creation fee/);
    const done = await h.send(callbackUpdate({ id: 9102 }, buttonData(skipped, 'Confirm')));
    assert.match(texts(done).join('\n'), /created/);
    assert.equal((await h.t.core.listCards(me.caller)).length, 1);
  });

  it('shows the fee after a valid coupon and the wallet after that fee, and charges exactly that', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9103, 100_000);
    await h.t.admin.createCoupon({ code: 'HALF', kind: 'percent', value: 5_000 });
    const { calls, plan } = await throughToSummary(h, 9103, 'HALF');
    const fee = plan.creationFee / 2;
    const summary = texts(calls).join('\n');
    assert.ok(summary.includes(`Creation fee: ${usd(fee)} (coupon HALF; without it ${usd(plan.creationFee)})`), summary);
    assert.ok(summary.includes(`after the fee: ${usd(100_000 - fee)}`), summary);
    const done = await h.send(callbackUpdate({ id: 9103 }, buttonData(calls, 'Confirm')));
    assert.match(texts(done).join('\n'), /created/);
    assert.equal((await h.t.core.walletBalance(me.caller)).balance, 100_000 - fee);
  });

  it("refuses a BIN whose initial balance exceeds the plan's limit before the card is issued, saying which plan to pick", async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9105, 100_000);
    await h.t.admin.addBin({
      bin: '400200',
      network: 'visa',
      threeDS: true,
      wallet: false,
      currency: 'USD',
      country: 'US',
      initialBalance: 200_000,
    });
    await h.send(textUpdate({ id: 9105 }, '/menu'));
    let calls = await h.send(callbackUpdate({ id: 9105 }, buttonData(h.calls, 'New card')));
    calls = await h.send(callbackUpdate({ id: 9105 }, buttonData(calls, /400200/)));
    const basic = (await h.t.core.listPlans())[0]!;
    calls = await h.send(callbackUpdate({ id: 9105 }, buttonData(calls, new RegExp(`^${basic.name} `))));
    calls = await h.send(textUpdate({ id: 9105 }, 'Rich'));
    calls = await h.send(callbackUpdate({ id: 9105 }, buttonData(calls, 'Skip')));
    assert.match(
      texts(calls).join('\n'),
      /Initial balance of this BIN exceeds the plan limit\. Initial balance: \$2,000\.00, Limit: \$1,000\.00\. Pick a plan with a higher limit\./,
    );
    assert.ok(!h.t.sandbox.calls.some((c) => c.operation === 'issue'));
    assert.deepEqual(await h.t.core.listCards(me.caller), []);
  });

  it('asks again for a name that is too long, with what to do next', async () => {
    const h = await createHarness();
    await h.linkedCustomer(9104);
    await h.send(textUpdate({ id: 9104 }, '/menu'));
    let calls = await h.send(callbackUpdate({ id: 9104 }, buttonData(h.calls, 'New card')));
    calls = await h.send(callbackUpdate({ id: 9104 }, buttonData(calls, /Online/)));
    calls = await h.send(callbackUpdate({ id: 9104 }, buttonData(calls, /limit/)));
    calls = await h.send(textUpdate({ id: 9104 }, 'x'.repeat(256)));
    assert.match(texts(calls).join('\n'), /Card name must be at most 255 characters\. Send another name, or \/cancel\./);
    calls = await h.send(textUpdate({ id: 9104 }, 'Fine'));
    assert.match(texts(calls).join('\n'), /coupon/);
  });
});
