import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertNotLogged } from '../../helpers/log.js';
import { createHarness, texts } from '../harness.js';
import { newCard, newCustomer } from '../../helpers/core.js';
import { callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from '../conversations/kit.js';

describe('card buttons', () => {
  it("another user's card id in any button's callback data gets 'Card not found or access denied'", async () => {
    const h = await createHarness();
    await h.linkedCustomer(6001);
    const stranger = await newCustomer(h.t, 10_000, 'Mallory');
    const theirs = await newCard(h.t, stranger);
    const actions = ['view', 'freeze', 'alertfreeze', 'alertview', 'unfreeze', 'details', 'otps', 'reqotp', 'topup', 'withdraw', 'close'];
    for (const action of [...actions.map((a) => `c:${a}:${theirs.id}`), `t:1:${theirs.id}`]) {
      const calls = await h.send(callbackUpdate({ id: 6001 }, action));
      assert.match(texts(calls).join('\n'), /Card not found or access denied\. Open your cards with \/cards\./, action);
      assert.equal(calls.filter((c) => c.method === 'answerCallbackQuery').length, 1, `${action}: answered exactly once`);
    }
    assert.equal((await h.t.core.getCard(stranger.caller, theirs.id)).status, 'active');
  });

  it('shows freeze or unfreeze, whichever applies, and redraws the view in place', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(6002);
    const card = await newCard(h.t, me);
    const buttons = (calls: { payload: Record<string, any> }[]) =>
      calls.flatMap((c) => (c.payload.reply_markup?.inline_keyboard ?? []).flat().map((b: { text: string }) => b.text)).join(' ');
    let calls = await h.send(callbackUpdate({ id: 6002 }, `c:freeze:${card.id}`, 42));
    const edit = calls.find((c) => c.method === 'editMessageText')!;
    assert.equal(edit.payload.message_id, 42);
    assert.match(edit.payload.text, /Status: frozen/);
    assert.match(buttons([edit]), /Unfreeze/);
    assert.doesNotMatch(buttons([edit]), /🧊 Freeze/);
    // The same Freeze pressed again (the view it was under is stale): redrawn, and the answer says why.
    calls = await h.send(callbackUpdate({ id: 6002 }, `c:freeze:${card.id}`, 42));
    assert.match(String(calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text), /This card is already frozen/);
    assert.match(String(calls.find((c) => c.method === 'editMessageText' && c.payload.message_id === 42)?.payload.text), /Status: frozen/);
  });

  it('a freeze pressed too late for Telegram to take the answer still freezes, without an apology', async () => {
    const h = await createHarness({
      failCall: (method) =>
        method === 'answerCallbackQuery'
          ? { code: 400, description: 'Bad Request: query is too old and response timeout expired or query ID is invalid' }
          : undefined,
    });
    const me = await h.linkedCustomer(6008);
    const card = await newCard(h.t, me);
    const calls = await h.send(callbackUpdate({ id: 6008 }, `c:freeze:${card.id}`, 42));
    assert.match(calls.find((c) => c.method === 'editMessageText')!.payload.text, /Status: frozen/);
    assert.doesNotMatch(texts(calls).join('\n'), /went wrong/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'frozen');
    assert.match(h.log(), /Telegram refused to answer a button press/);
  });

  it('sends details protected, as spoilers, and schedules their deletion', async () => {
    const h = await createHarness({ config: { sensitiveTtlSeconds: 60 } });
    const me = await h.linkedCustomer(6003);
    const card = await newCard(h.t, me);
    const calls = await h.send(callbackUpdate({ id: 6003 }, `c:details:${card.id}`));
    const sent = calls.find((c) => c.method === 'sendMessage')!;
    assert.equal(sent.payload.protect_content, true);
    assert.deepEqual(
      sent.payload.entities.map((e: { type: string }) => e.type),
      ['spoiler', 'spoiler', 'spoiler'],
    );
    const details = await h.t.core.getSensitiveDetails(me.caller, card.id);
    assertNotLogged(h.log(), [details.pan, details.cvv], 'card data never reaches the log');
    const pending = await h.t.database.db
      .withTables<{ bot_pending_deletions: { chat_id: number; message_id: number; due_at: string } }>()
      .selectFrom('bot_pending_deletions')
      .selectAll()
      .execute();
    assert.equal(pending.length, 1);
    assert.equal(pending[0]!.due_at, new Date(h.t.clock.now().getTime() + 60_000).toISOString());
  });

  it('a group gets a one-line refusal and nothing else', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(6004);
    const card = await newCard(h.t, me);
    let calls = await h.send(textUpdate({ id: 6004, groupId: -100 }, '/cards'));
    assert.deepEqual(texts(calls), ['I only work in a private chat with you.']);
    calls = await h.send(callbackUpdate({ id: 6004, groupId: -100 }, `c:details:${card.id}`));
    assert.deepEqual(
      calls.map((c) => c.method),
      ['answerCallbackQuery'],
    );
  });

  it('pages transactions with next and previous', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(6005);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 10_000 });
    for (let i = 0; i < 6; i++) await h.t.admin.simulatePurchase(card.id, 100, `Shop ${i}`);
    let calls = await h.send(callbackUpdate({ id: 6005 }, 't:1:*'));
    assert.match(texts(calls)[0]!, /page 1 of 2/);
    calls = await h.send(callbackUpdate({ id: 6005 }, 't:2:*'));
    assert.match(texts(calls)[0]!, /page 2 of 2/);
  });
});

describe('the card shortcut commands', () => {
  it('/topup AMOUNT with one card goes straight to the quote; /topup alone asks the amount', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(6101);
    const card = await newCard(h.t, me);
    let calls = await h.send(textUpdate({ id: 6101 }, '/topup 25'));
    assert.match(texts(calls).join('\n'), /Platform fee/);
    calls = await h.send(textUpdate({ id: 6101 }, '/topup'));
    assert.match(texts(calls).join('\n'), /How much to top up “Ads”/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 0);
  });

  it('/freeze and /details act on the only card at once', async () => {
    const h = await createHarness({ config: { sensitiveTtlSeconds: 60 } });
    const me = await h.linkedCustomer(6102);
    const card = await newCard(h.t, me);
    let calls = await h.send(textUpdate({ id: 6102 }, '/details'));
    assert.equal(calls.find((c) => c.method === 'sendMessage')?.payload.protect_content, true);
    calls = await h.send(textUpdate({ id: 6102 }, '/freeze'));
    assert.match(texts(calls).join('\n'), /Status: frozen/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).status, 'frozen');
  });

  it('with several cards, each command asks which card, with buttons for that action', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(6103);
    const first = await newCard(h.t, me);
    await newCard(h.t, me, 'Travel');
    for (const command of ['topup', 'freeze', 'details']) {
      const calls = await h.send(textUpdate({ id: 6103 }, `/${command}`));
      assert.match(texts(calls).join('\n'), /Pick a card/);
      assert.equal(buttonData(calls, 'Ads'), `c:${command}:${first.id}`);
    }
    assert.equal((await h.t.core.getCard(me.caller, first.id)).status, 'active');
  });
});
