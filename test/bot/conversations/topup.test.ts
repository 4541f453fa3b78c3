import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts, type ApiCall, type Harness } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { usd } from './kit.js';

const confirmData = (calls: ApiCall[]) =>
  calls
    .flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat())
    .map((b: { callback_data?: string }) => b.callback_data ?? '')
    .find((d: string) => d.endsWith(':ok'))!;

async function quoteFor(h: Harness, chatId: number, cardId: string, amount: string): Promise<{ calls: ApiCall[]; confirm: string }> {
  await h.send(callbackUpdate({ id: chatId }, `c:topup:${cardId}`, 7));
  const calls = await h.send(textUpdate({ id: chatId }, amount));
  return { calls, confirm: confirmData(calls) };
}

describe('the top-up conversation', () => {
  it('quotes the platform fee and total before the user confirms', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7001);
    const card = await newCard(h.t, me);
    const { calls } = await quoteFor(h, 7001, card.id, '50');
    const quote = await h.t.core.quoteTopup(me.caller, card.id, { amount: 5_000 });
    const text = texts(calls).join('\n');
    assert.ok(text.includes(`Platform fee (Online): ${usd(quote.platformFee)}`), text);
    assert.ok(text.includes(`Total charged to the wallet: ${usd(quote.totalCharged)}`), text);
  });

  it('validates a typed amount with the core schema and asks again', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7002);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 7002 }, `c:topup:${card.id}`));
    let calls = await h.send(textUpdate({ id: 7002 }, '20000'));
    assert.match(texts(calls).join('\n'), /Maximum amount is \$10,000\.00/);
    calls = await h.send(textUpdate({ id: 7002 }, 'ten'));
    assert.match(texts(calls).join('\n'), /Amount must be a number/);
    calls = await h.send(textUpdate({ id: 7002 }, '12.345'));
    assert.match(texts(calls).join('\n'), /at most 2 decimal places/);
  });

  it('a double-tapped confirm tops up once', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7003);
    const card = await newCard(h.t, me);
    const { confirm } = await quoteFor(h, 7003, card.id, '50');
    const mark = h.calls.length;
    await Promise.all([h.send(callbackUpdate({ id: 7003 }, confirm)), h.send(callbackUpdate({ id: 7003 }, confirm))]);
    const all = texts(h.since(mark)).join('\n');
    assert.equal(h.since(mark, 'answerCallbackQuery').length, 2, 'each tap answered once');
    assert.equal((all.match(/Topped up/g) ?? []).length, 1);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 5_000);
  });

  it('a confirm pressed on an old message never runs again', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7004);
    const card = await newCard(h.t, me);
    const { confirm } = await quoteFor(h, 7004, card.id, '50');
    await h.send(callbackUpdate({ id: 7004 }, confirm));
    h.t.clock.advance(10 * 60_000);
    await quoteFor(h, 7004, card.id, '20');
    const calls = await h.send(callbackUpdate({ id: 7004 }, confirm));
    const answers = calls.filter((c) => c.method === 'answerCallbackQuery');
    assert.equal(answers.length, 1);
    assert.match(String(answers[0]!.payload.text), /expired/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 5_000);
  });

  it('/cancel leaves the conversation; the next text is not taken as an amount', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7005);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 7005 }, `c:topup:${card.id}`));
    let calls = await h.send(textUpdate({ id: 7005 }, '/cancel'));
    assert.deepEqual(texts(calls), ['Cancelled.']);
    calls = await h.send(textUpdate({ id: 7005 }, '50'));
    assert.doesNotMatch(texts(calls).join('\n'), /Platform fee/);
    calls = await h.send(textUpdate({ id: 7005 }, '/cancel'));
    assert.deepEqual(texts(calls), ['Nothing to cancel.']);
  });

  it('lets a menu button through while it waits for an amount, and answers it', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7006);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 7006 }, `c:topup:${card.id}`));
    const calls = await h.send(callbackUpdate({ id: 7006 }, `c:view:${card.id}`));
    assert.equal(calls.filter((c) => c.method === 'answerCallbackQuery').length, 1);
    assert.match(texts(calls).join('\n'), /Status: active/);
    const quote = await h.send(textUpdate({ id: 7006 }, '50'));
    assert.match(texts(quote).join('\n'), /Platform fee/);
  });

  it('starting another flow leaves the one that was waiting', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7007);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 2_000 });
    await h.send(callbackUpdate({ id: 7007 }, `c:topup:${card.id}`));
    let calls = await h.send(callbackUpdate({ id: 7007 }, `c:withdraw:${card.id}`));
    assert.match(texts(calls).join('\n'), /How much to withdraw/);
    calls = await h.send(textUpdate({ id: 7007 }, '10'));
    assert.match(texts(calls).join('\n'), /Withdraw \$10\.00 from “Ads”/);
  });
});
