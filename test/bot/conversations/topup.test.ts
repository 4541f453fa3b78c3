import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts, type ApiCall, type Harness } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData, usd } from './kit.js';

const confirmData = (calls: ApiCall[]) =>
  calls
    .flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat())
    .map((b: { callback_data?: string }) => b.callback_data ?? '')
    .find((d: string) => d.endsWith(':ok')) as string;

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
    assert.match(String(answers[0]!.payload.text), /already used/);
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

describe('the top-up conversation refuses at the quote what the service would refuse', () => {
  it('over the wallet: the refusal with the most that works, no Confirm, no cooldown; that amount then goes through', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7010, 10_000);
    const card = await newCard(h.t, me);
    const { calls, confirm } = await quoteFor(h, 7010, card.id, '500');
    const text = texts(calls).join('\n');
    const { maxAmount } = await h.t.core.quoteTopup(me.caller, card.id, { amount: 500 });
    assert.match(
      text,
      /Insufficient wallet balance\. Required: \$512\.80 \(topup: \$500\.00 \+ platform fee: \$12\.80\), Available: \$95\.00/,
    );
    assert.ok(text.includes(`The most you can top up now is ${usd(maxAmount)}`), text);
    assert.doesNotMatch(text, /Wallet after/);
    assert.equal(confirm, undefined, 'no Confirm button');
    assert.equal((await h.t.core.quoteTopup(me.caller, card.id, { amount: 500 })).cooldownSeconds, 0, 'no cooldown started');

    const again = await h.send(textUpdate({ id: 7010 }, (maxAmount / 100).toFixed(2)));
    const done = await h.send(callbackUpdate({ id: 7010 }, confirmData(again)));
    assert.match(texts(done).join('\n'), /Topped up/);
    const fee = (await h.t.core.quoteTopup(me.caller, card.id, { amount: maxAmount })).platformFee;
    assert.ok((await h.t.core.walletBalance(me.caller)).balance < fee, 'the most that works left less than another fee');
  });

  it('over the plan limit: the refusal with the room left, no Confirm', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7011, 300_000);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 60_000 });
    h.t.clock.advance(3 * 60_000);
    const { calls, confirm } = await quoteFor(h, 7011, card.id, '500');
    const text = texts(calls).join('\n');
    assert.match(text, /Topup would exceed card limit\. Current deposit: \$600\.00, Limit: \$1,000\.00, Available: \$400\.00/);
    assert.match(text, /The most you can top up now is \$400\.00/);
    assert.equal(confirm, undefined);
  });

  it('offers what this card can take now, not the service-wide range; nothing to offer says so at once', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7013, 300_000);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 97_000 });
    h.t.clock.advance(3 * 60_000);
    // $30 of the $1,000 limit left: the prompt says so, and only the presets within it are offered.
    const asked = await h.send(callbackUpdate({ id: 7013 }, `c:topup:${card.id}`, 7));
    const prompt = texts(asked).join('\n');
    assert.match(prompt, /From \$5\.00 to \$30\.00\./);
    const labels = asked.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat()).map((b: { text: string }) => b.text);
    assert.deepEqual(
      labels.filter((l: string) => l.startsWith('$')),
      ['$10.00', '$25.00'],
    );
    await h.send(textUpdate({ id: 7013 }, '/cancel'));

    const full = await newCard(h.t, me);
    await h.t.core.topup(me.caller, full.id, { amount: 99_800 });
    h.t.clock.advance(3 * 60_000);
    const none = texts(await h.send(callbackUpdate({ id: 7013 }, `c:topup:${full.id}`, 8))).join('\n');
    assert.match(none, /\$5\.00/);
    assert.doesNotMatch(none, /How much to top up/);
  });

  it('a card inside its cooldown says so, with the time left, before any amount is asked', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7012);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 1_000 });
    h.t.clock.advance(30_000);
    const calls = await h.send(callbackUpdate({ id: 7012 }, `c:topup:${card.id}`));
    const text = texts(calls).join('\n');
    assert.match(text, /Please wait 1 min 30 s before topping up this card again/);
    assert.doesNotMatch(text, /How much to top up/);
  });

  it('a second tap on a used Confirm says it was already used', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7013);
    const card = await newCard(h.t, me);
    const { confirm } = await quoteFor(h, 7013, card.id, '50');
    await h.send(callbackUpdate({ id: 7013 }, confirm));
    const calls = await h.send(callbackUpdate({ id: 7013 }, confirm));
    assert.deepEqual(
      calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => c.payload.text),
      ['This confirmation was already used.'],
    );
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 5_000);
  });
});

describe('the top-up amount step', () => {
  it('offers preset amounts and "Other"; a preset goes straight to the quote', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(7014);
    const card = await newCard(h.t, me);
    const asked = await h.send(callbackUpdate({ id: 7014 }, `c:topup:${card.id}`));
    const labels = asked.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat()).map((b: { text: string }) => b.text);
    assert.deepEqual(labels, ['$10.00', '$25.00', '$50.00', '$100.00', '✏️ Other amount']);
    let calls = await h.send(callbackUpdate({ id: 7014 }, buttonData(asked, 'Other')));
    assert.match(texts(calls).join('\n'), /Type the amount/);
    calls = await h.send(callbackUpdate({ id: 7014 }, buttonData(asked, '$25.00')));
    assert.match(texts(calls).join('\n'), /Top up \$25\.00|\$25\.00/);
    assert.match(texts(calls).join('\n'), /Platform fee/);
  });
});
