import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { botTables } from '../../../src/bot/store/tables.js';
import { findLink } from '../../../src/bot/store/chat-links.js';
import { buttonData } from '../conversations/kit.js';
import { createHarness, texts, type ApiCall, type Harness } from '../harness.js';
import { newCustomer } from '../../helpers/core.js';
import { callbackUpdate, channelPostUpdate, editedMessageUpdate, messageUpdate, textUpdate } from '../../helpers/updates.js';
import type { Update } from 'grammy/types';

const messageIdOf = (update: Update) => (update.message ?? update.edited_message ?? update.channel_post)!.message_id;
const linkOf = (h: Harness, chatId: number) => findLink(botTables(h.t.database.db), chatId);

/** The update's own message was deleted before the bot said or did anything else. */
function deletedFirst(calls: ApiCall[], update: Update): void {
  assert.equal(calls[0]?.method, 'deleteMessage', `first call: ${calls.map((c) => c.method).join(', ')}`);
  assert.equal(calls[0]?.payload.message_id, messageIdOf(update));
}

describe('tokens never linger where they were pasted', () => {
  describe('in a private chat: deleted, then linked as a plain paste is', () => {
    for (const [how, wrap] of [
      ['/start TOKEN (a deep link)', (token: string) => ({ text: `/start ${token}` })],
      ['/link TOKEN', (token: string) => ({ text: `/link ${token}` })],
      ['a photo caption', (token: string) => ({ caption: token })],
      ['a token inside other text', (token: string) => ({ text: `my token is ${token} thanks` })],
    ] as const) {
      it(`${how}`, async () => {
        const h = await createHarness();
        const { token, caller } = await newCustomer(h.t);
        const update = messageUpdate({ id: 5101 }, wrap(token));
        const calls = await h.send(update);
        deletedFirst(calls, update);
        assert.match(texts(calls).join('\n'), /Linked/);
        assert.equal((await linkOf(h, 5101))?.userId, caller.userId);
        assert.ok(!h.log().includes(token), 'the token must not reach the log');
      });
    }

    it('an edited message that now holds a token is deleted, and links like a new one', async () => {
      const h = await createHarness();
      const { token, caller } = await newCustomer(h.t);
      const first = messageUpdate({ id: 5102 }, { text: 'hello' });
      await h.send(first);
      const edit = editedMessageUpdate({ id: 5102 }, messageIdOf(first), { text: `oops, here: ${token}` });
      const calls = await h.send(edit);
      deletedFirst(calls, edit);
      assert.match(texts(calls).join('\n'), /Linked/);
      assert.equal((await linkOf(h, 5102))?.userId, caller.userId);
      assert.ok(!h.log().includes(token));
    });

    it('a forwarded token is deleted and links nothing: the original is elsewhere, so it must be revoked', async () => {
      const h = await createHarness();
      const { token } = await newCustomer(h.t);
      const update = messageUpdate({ id: 5103 }, { text: token, forwarded: true });
      const calls = await h.send(update);
      deletedFirst(calls, update);
      assert.match(texts(calls).join('\n'), /still in the chat it was forwarded from.*revoke/s);
      assert.doesNotMatch(texts(calls).join('\n'), /Linked/);
      assert.equal(await linkOf(h, 5103), undefined);
      assert.ok(!h.log().includes(token));
    });

    it('a message with several tokens is deleted and links none of them', async () => {
      const h = await createHarness();
      const [a, b] = [await newCustomer(h.t), await newCustomer(h.t, 0, 'Bob')];
      const update = messageUpdate({ id: 5104 }, { text: `${a.token}\n${b.token}` });
      const calls = await h.send(update);
      deletedFirst(calls, update);
      assert.match(texts(calls).join('\n'), /more than one API token/);
      assert.equal(await linkOf(h, 5104), undefined);
    });

    it('says so when the message cannot be deleted, and still links', async () => {
      const h = await createHarness({
        failCall: (method) =>
          method === 'deleteMessage' ? { code: 400, description: "Bad Request: message can't be deleted" } : undefined,
      });
      const { token } = await newCustomer(h.t);
      const update = messageUpdate({ id: 5105 }, { text: token });
      const calls = await h.send(update);
      const notice = calls.find((c) => c.method === 'sendMessage' && /could not delete/.test(c.payload.text));
      assert.equal(notice?.payload.reply_parameters?.message_id, messageIdOf(update));
      assert.match(texts(calls).join('\n'), /Linked/);
      assert.match(h.log(), /could not delete a message holding an API token/);
      assert.ok(!h.log().includes(token));
    });

    it("text that merely mentions 'vc_' is left alone", async () => {
      const h = await createHarness();
      await h.linkedCustomer(5106);
      const calls = await h.send(textUpdate({ id: 5106 }, 'what is vc_ in a token?'));
      assert.equal(calls.filter((c) => c.method === 'deleteMessage').length, 0);
      assert.match(texts(calls).join('\n'), /did not get that/);
    });

    it('a flow waiting for a card name never takes a token (even inside other text) as the name', async () => {
      const h = await createHarness();
      await h.linkedCustomer(5107, 100_000);
      const stranger = await newCustomer(h.t, 0, 'Mallory');
      await h.send(textUpdate({ id: 5107 }, '/menu'));
      let calls = await h.send(callbackUpdate({ id: 5107 }, buttonData(h.calls, 'New card')));
      calls = await h.send(callbackUpdate({ id: 5107 }, buttonData(calls, /Online/)));
      calls = await h.send(callbackUpdate({ id: 5107 }, buttonData(calls, /limit/)));
      assert.match(texts(calls).join('\n'), /Name the card/);
      // Forwarded: deleted, links nothing, and the flow keeps waiting for a name.
      const forwarded = messageUpdate({ id: 5107 }, { text: `card ${stranger.token}`, forwarded: true });
      calls = await h.send(forwarded);
      deletedFirst(calls, forwarded);
      assert.doesNotMatch(texts(calls).join('\n'), /coupon/);
      calls = await h.send(textUpdate({ id: 5107 }, 'Travel'));
      assert.match(texts(calls).join('\n'), /coupon/);
      // Typed: deleted and links, leaving the flow; never read as an answer.
      const typed = messageUpdate({ id: 5107 }, { text: `coupon ${stranger.token}` });
      calls = await h.send(typed);
      deletedFirst(calls, typed);
      assert.doesNotMatch(texts(calls).join('\n'), /Invalid coupon|Creation fee/);
      assert.match(texts(calls).join('\n'), /Linked/);
      assert.ok(!h.log().includes(stranger.token));
    });
  });

  describe('in a group or a channel: deleted, never linked, and the token must be revoked', () => {
    it('/link TOKEN in a group', async () => {
      const h = await createHarness();
      const { token } = await newCustomer(h.t);
      const update = textUpdate({ id: 5201, groupId: -5201 }, `/link ${token}`);
      const calls = await h.send(update);
      deletedFirst(calls, update);
      assert.match(texts(calls).join('\n'), /Anyone in this chat may have seen it: revoke it/);
      assert.equal(await linkOf(h, -5201), undefined);
      assert.equal(await linkOf(h, 5201), undefined);
      assert.ok(!h.log().includes(token));
    });

    for (const [how, fields] of [
      ['a token inside other text', (token: string) => ({ text: `here you go ${token}` })],
      ['a photo caption', (token: string) => ({ caption: token })],
      ['a forward', (token: string) => ({ text: token, forwarded: true })],
    ] as const) {
      it(`${how} in a group`, async () => {
        const h = await createHarness();
        const { token } = await newCustomer(h.t);
        const update = messageUpdate({ id: 5202, groupId: -5202 }, fields(token));
        const calls = await h.send(update);
        deletedFirst(calls, update);
        assert.match(texts(calls).join('\n'), /revoke it/);
        assert.equal(await linkOf(h, -5202), undefined);
      });
    }

    it('an edit in a group that now holds a token', async () => {
      const h = await createHarness();
      const { token } = await newCustomer(h.t);
      const edit = editedMessageUpdate({ id: 5203, groupId: -5203 }, 77, { text: `see ${token}` });
      const calls = await h.send(edit);
      deletedFirst(calls, edit);
      assert.match(texts(calls).join('\n'), /revoke it/);
    });

    it('a channel post', async () => {
      const h = await createHarness();
      const { token } = await newCustomer(h.t);
      const post = channelPostUpdate(-1005204, `new token: ${token}`);
      const calls = await h.send(post);
      deletedFirst(calls, post);
      assert.match(texts(calls).join('\n'), /revoke it/);
    });

    it('a group where the bot may not delete: the failure is logged without the token, and the reply still says to revoke it', async () => {
      const h = await createHarness({
        failCall: (method) =>
          method === 'deleteMessage' ? { code: 400, description: "Bad Request: message can't be deleted" } : undefined,
      });
      const { token } = await newCustomer(h.t);
      const update = messageUpdate({ id: 5205, groupId: -5205 }, { text: `token ${token}` });
      const calls = await h.send(update);
      const reply = calls.find((c) => c.method === 'sendMessage')!;
      assert.match(reply.payload.text, /could not delete.*revoke it/s);
      assert.equal(reply.payload.reply_parameters?.message_id, messageIdOf(update));
      assert.match(h.log(), /could not delete a message holding an API token/);
      assert.match(h.log(), /message can't be deleted/);
      assert.ok(!h.log().includes(token));
      assert.equal(await linkOf(h, -5205), undefined);
    });
  });
});
