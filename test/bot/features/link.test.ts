import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts } from '../harness.js';
import { newCustomer } from '../../helpers/core.js';
import { textUpdate } from '../../helpers/updates.js';

describe('linking a chat', () => {
  it('deletes the token message at once and never writes the token to the log', async () => {
    const h = await createHarness();
    const { token } = await newCustomer(h.t);
    const update = textUpdate({ id: 5001 }, token);
    const calls = await h.send(update);
    assert.equal(calls[0]?.method, 'deleteMessage');
    assert.equal(calls[0]?.payload.message_id, update.message!.message_id);
    assert.match(texts(calls).join('\n'), /Linked/);
    assert.ok(h.log().length > 0, 'the update was logged');
    assert.ok(!h.log().includes(token), 'the token must not reach the log');
  });

  it('links with /link TOKEN, deleting that message too', async () => {
    const h = await createHarness();
    const { token } = await newCustomer(h.t);
    const calls = await h.send(textUpdate({ id: 5002 }, `/link ${token}`));
    assert.equal(calls[0]?.method, 'deleteMessage');
    assert.match(texts(calls).join('\n'), /Linked/);
    assert.ok(!h.log().includes(token));
  });

  it("refuses an unknown token in the service's words, still deleting it", async () => {
    const h = await createHarness();
    const calls = await h.send(textUpdate({ id: 5003 }, 'vc_not-a-real-token-at-all-000000000'));
    assert.equal(calls[0]?.method, 'deleteMessage');
    assert.match(texts(calls).join('\n'), /Invalid or missing API token\. Check the token/);
  });

  it('asks an unlinked chat to link first', async () => {
    const h = await createHarness();
    let calls = await h.send(textUpdate({ id: 5004 }, '/cards'));
    assert.match(texts(calls).join('\n'), /not linked yet/);
    calls = await h.send(textUpdate({ id: 5004 }, 'hello there'));
    assert.deepEqual(texts(calls), ['This chat is not linked yet. Send me your API token (or /link TOKEN) first.']);
  });

  it('tells a chat whose token stopped working behind its back, once, and forgets the link', async () => {
    const h = await createHarness();
    const customer = await h.linkedCustomer(5005);
    // Revoked without the core's revocation (which ends the link and queues the chat's notice itself).
    await h.t.database.db
      .updateTable('api_tokens')
      .set({ revoked_at: h.t.clock.now().toISOString() })
      .where('user_id', '=', customer.userId)
      .execute();
    let calls = await h.send(textUpdate({ id: 5005 }, '/cards'));
    assert.match(texts(calls).join('\n'), /no longer works \(Invalid or missing API token\)/);
    calls = await h.send(textUpdate({ id: 5005 }, '/cards'));
    assert.match(texts(calls).join('\n'), /not linked yet/);
  });

  it('/unlink forgets the chat', async () => {
    const h = await createHarness();
    await h.linkedCustomer(5006);
    let calls = await h.send(textUpdate({ id: 5006 }, '/unlink'));
    assert.match(texts(calls).join('\n'), /Unlinked/);
    calls = await h.send(textUpdate({ id: 5006 }, '/menu'));
    assert.match(texts(calls).join('\n'), /not linked yet/);
  });

  it('speaks Russian to a user whose Telegram is in Russian', async () => {
    const h = await createHarness();
    const calls = await h.send(textUpdate({ id: 5007, languageCode: 'ru' }, '/start'));
    assert.match(texts(calls).join('\n'), /Привет/);
  });

  it('a token pasted into a linked chat, even while a flow waits for text, is deleted and links, never read as an answer', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(5008, 100_000);
    const other = await newCustomer(h.t, 0, 'Other');
    const { newCard } = await import('../../helpers/core.js');
    const card = await newCard(h.t, me);
    const { callbackUpdate } = await import('../../helpers/updates.js');
    await h.send(callbackUpdate({ id: 5008 }, `c:topup:${card.id}`));
    const update = textUpdate({ id: 5008 }, other.token);
    const calls = await h.send(update);
    assert.equal(calls[0]?.method, 'deleteMessage');
    assert.equal(calls[0]?.payload.message_id, update.message!.message_id);
    assert.match(texts(calls).join('\n'), /Linked/);
    assert.doesNotMatch(texts(calls).join('\n'), /amount|Platform fee/i);
    assert.ok(!h.log().includes(other.token));
    // The chat now acts for the other user; the waiting top-up is gone.
    const after = await h.send(textUpdate({ id: 5008 }, '50'));
    assert.doesNotMatch(texts(after).join('\n'), /Platform fee/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 0);
  });
});
