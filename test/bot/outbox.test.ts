import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startBackgroundJobs } from '../../src/bot/jobs/background-jobs.js';
import { createHarness } from './harness.js';
import { newCard } from '../helpers/core.js';
import { textUpdate } from '../helpers/updates.js';

describe('pushing the core events to chats', () => {
  it('sends each new OTP to every chat linked to the owner, once, and none to other users', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(8001);
    await h.send(textUpdate({ id: 8002 }, `/link ${me.token}`));
    await h.linkedCustomer(8003);
    const card = await newCard(h.t, me);
    const jobs = startBackgroundJobs(h.bot);
    const mark = h.calls.length;
    const otp = await h.t.admin.simulateOtp(card.id, 1_500, 'Shop');
    const toChat = (chatId: number) =>
      h.waitFor((c) => c.method === 'sendMessage' && c.payload.chat_id === chatId && String(c.payload.text).includes(otp.code), mark);
    const [first, second] = await Promise.all([toChat(8001), toChat(8002)]);
    assert.equal(first.payload.protect_content, true);
    assert.equal(second.payload.protect_content, true);
    await jobs.stop();
    assert.equal(h.since(mark, 'sendMessage').filter((c) => String(c.payload.text).includes(otp.code)).length, 2);
    assert.equal(h.since(mark, 'sendMessage').filter((c) => c.payload.chat_id === 8003).length, 0);
  });

  it('resumes after a restart without sending anything twice', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(8101);
    const card = await newCard(h.t, me);
    const mark = h.calls.length;
    let jobs = startBackgroundJobs(h.bot);
    const first = await h.t.admin.simulateOtp(card.id);
    await h.waitFor((c) => c.method === 'sendMessage' && String(c.payload.text).includes(first.code), mark);
    await jobs.stop();

    await h.t.core.freeze(me.caller, card.id);
    await h.t.admin.simulatePurchase(card.id, 700, 'Bakery'); // while the bot is down
    h.restart();
    jobs = startBackgroundJobs(h.bot);
    const alert = await h.waitFor((c) => c.method === 'sendMessage' && String(c.payload.text).includes('Bakery'), mark);
    const second = await h.t.admin.simulateOtp(card.id);
    await h.waitFor((c) => c.method === 'sendMessage' && String(c.payload.text).includes(second.code), mark);
    await jobs.stop();

    assert.match(String(alert.payload.text), /Declined \$7\.00 at Bakery/);
    // Declined as frozen: after its Unfreeze fix, its button opens the card (there is nothing to freeze).
    const open = alert.payload.reply_markup.inline_keyboard.flat().at(-1);
    assert.equal(open.callback_data, `c:alertview:${card.id}`);
    const sends = h.since(mark, 'sendMessage').map((c) => String(c.payload.text));
    assert.equal(sends.filter((s) => s.includes(first.code)).length, 1);
    assert.equal(sends.filter((s) => s.includes('Bakery')).length, 1);
  });

  it('deletes pushed OTP messages after the configured time', async () => {
    const h = await createHarness({ config: { otpTtlSeconds: 30 } });
    const me = await h.linkedCustomer(8201);
    const card = await newCard(h.t, me);
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const otp = await h.t.admin.simulateOtp(card.id);
    await h.waitFor((c) => c.method === 'sendMessage' && String(c.payload.text).includes(otp.code), mark);
    assert.equal(h.since(mark, 'deleteMessage').length, 0);
    // The deletion is stored right after the send; wait for the row before moving the clock.
    const pending = () =>
      h.t.database.db
        .withTables<{ bot_pending_deletions: { chat_id: number } }>()
        .selectFrom('bot_pending_deletions')
        .selectAll()
        .execute();
    while ((await pending()).length === 0) await new Promise((resolve) => setImmediate(resolve));
    h.t.clock.advance(31_000);
    await h.waitFor((c) => c.method === 'deleteMessage', mark);
    await jobs.stop();
  });

  it('skips a chat that blocked the bot instead of holding up later events', async () => {
    const h = await createHarness({
      failCall: (method, p) =>
        method === 'sendMessage' && p.chat_id === 8301 ? { code: 403, description: 'Forbidden: bot was blocked by the user' } : undefined,
    });
    const me = await h.linkedCustomer(8301);
    await h.send(textUpdate({ id: 8302 }, `/link ${me.token}`));
    const card = await newCard(h.t, me);
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const first = await h.t.admin.simulateOtp(card.id);
    const second = await h.t.admin.simulateOtp(card.id);
    await h.waitFor((c) => c.payload.chat_id === 8302 && String(c.payload.text).includes(second.code), mark);
    await jobs.stop();
    const toBlocked = h.since(mark, 'sendMessage').filter((c) => c.payload.chat_id === 8301);
    assert.equal(toBlocked.length, 2, 'one attempt per event, no retry loop');
    assert.ok(h.since(mark, 'sendMessage').some((c) => c.payload.chat_id === 8302 && String(c.payload.text).includes(first.code)));
  });

  it('pushes in the language the chat was linked in', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(8401);
    await h.send(textUpdate({ id: 8402, languageCode: 'ru' }, `/link ${me.token}`));
    const card = await newCard(h.t, me);
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const otp = await h.t.admin.simulateOtp(card.id, 123_450, 'Shop');
    const ru = await h.waitFor((c) => c.payload.chat_id === 8402 && String(c.payload.text).includes(otp.code), mark);
    const en = await h.waitFor((c) => c.payload.chat_id === 8401 && String(c.payload.text).includes(otp.code), mark);
    await jobs.stop();
    assert.match(String(ru.payload.text), /для «Ads»/);
    assert.match(String(en.payload.text), /for “Ads”/);
    // The amount in each chat's own number format, the currency sign in it and no trailing code.
    assert.match(String(ru.payload.text), /: 1\s234,50\s\$, Shop\./);
    assert.match(String(en.payload.text), /: \$1,234\.50 at Shop\./);
    assert.doesNotMatch(`${ru.payload.text} ${en.payload.text}`, /USD/);
  });
});
