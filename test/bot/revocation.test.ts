import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runAdmin } from '../../src/admin/run.js';
import { startBackgroundJobs } from '../../src/bot/jobs/background-jobs.js';
import { CONVERSATION_KEY_PREFIX } from '../../src/bot/store/kv-keys.js';
import { newCard } from '../helpers/core.js';
import { callbackUpdate, textUpdate } from '../helpers/updates.js';
import { createHarness, texts, type Harness } from './harness.js';

async function admin(h: Harness, ...argv: string[]): Promise<number> {
  return runAdmin(argv, async () => ({ ...h.t, close: async () => {} }), { out: () => {}, err: () => {} });
}

const conversationState = (h: Harness, chatId: number) =>
  h.t.database.db
    .withTables<{ bot_kv: { key: string } }>()
    .selectFrom('bot_kv')
    .select('key')
    .where('key', '=', `${CONVERSATION_KEY_PREFIX}${chatId}`)
    .executeTakeFirst();

describe('revocation stops everything at once', () => {
  it('a revoked token gets no pushed OTP, its flow is dropped, and its chat is told once that it was unlinked', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9101);
    const { token: second } = { token: await h.t.admin.issueToken(me.userId) };
    await h.send(textUpdate({ id: 9102 }, `/link ${second}`));
    const card = await newCard(h.t, me);
    // A flow waiting in the chat whose token is about to be revoked.
    await h.send(callbackUpdate({ id: 9101 }, `c:topup:${card.id}`, 3));
    assert.ok(await conversationState(h, 9101), 'the top-up flow waits for an amount');

    const firstToken = (await h.t.admin.listTokens(me.userId)).find((t) => t.prefix === me.token.slice(0, 7));
    assert.equal(await admin(h, 'tokens', 'revoke', '--id', firstToken!.id), 0);
    assert.equal(await conversationState(h, 9101), undefined, 'the pending flow ended with the link');

    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const otp = await h.t.admin.simulateOtp(card.id, 900, 'Shop');
    await h.waitFor((c) => c.method === 'sendMessage' && c.payload.chat_id === 9102 && String(c.payload.text).includes(otp.code), mark);
    const again = await h.t.admin.simulateOtp(card.id, 900, 'Shop');
    await h.waitFor((c) => c.method === 'sendMessage' && c.payload.chat_id === 9102 && String(c.payload.text).includes(again.code), mark);
    await jobs.stop();

    const toRevoked = texts(h.since(mark).filter((c) => c.payload.chat_id === 9101));
    assert.deepEqual(toRevoked, [
      'This chat was unlinked: its API token was revoked. Nothing more will arrive here. To link again, send a new API token.',
    ]);

    // The next message in that chat is not told a second time, and the old flow does not take it.
    const calls = await h.send(textUpdate({ id: 9101 }, '25'));
    assert.doesNotMatch(texts(calls).join('\n'), /revoked|unlinked|no longer works|Platform fee/);
    assert.match(texts(calls).join('\n'), /not linked yet/);
  });

  it('a push goes only to a chat whose token is still valid, even when the link outlived the revocation', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9201);
    const card = await newCard(h.t, me);
    // Revoked behind the bot's back (no chat link ended): the outbox itself must refuse the chat.
    await h.t.database.db
      .updateTable('api_tokens')
      .set({ revoked_at: h.t.clock.now().toISOString() })
      .where('user_id', '=', me.userId)
      .execute();
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const otp = await h.t.admin.simulateOtp(card.id);
    const purchase = await h.t.admin.simulatePurchase(card.id, 100);
    // Both events are consumed (marked delivered) without reaching the chat.
    for (;;) {
      if ((await h.t.core.events.pending()).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await jobs.stop();
    assert.equal(purchase.status, 'Declined');
    assert.deepEqual(
      h.since(mark, 'sendMessage').filter((c) => String(c.payload.text).includes(otp.code) || c.payload.chat_id === 9201),
      [],
    );
  });

  it('tokens revoke --user ID --all cuts a user off everywhere: every token refused, every chat unlinked and told', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9301);
    await h.send(textUpdate({ id: 9302 }, `/link ${await h.t.admin.issueToken(me.userId)}`));
    const other = await h.linkedCustomer(9303);
    assert.equal(await admin(h, 'tokens', 'revoke', '--user', me.userId, '--all'), 0);
    await assert.rejects(h.t.core.authenticate(me.token), /Invalid or missing API token/);
    assert.equal((await h.t.core.authenticate(other.token)).userId, other.userId);
    assert.deepEqual(
      (await h.t.admin.listLinks({ userId: me.userId })).map((l) => l.chatId),
      [],
    );
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    await h.waitFor((c) => c.payload.chat_id === 9301, mark);
    await h.waitFor((c) => c.payload.chat_id === 9302, mark);
    await jobs.stop();
    assert.equal(h.since(mark, 'sendMessage').filter((c) => c.payload.chat_id === 9303).length, 0);
  });

  it('links remove --chat ID unlinks one chat, which is told once in the language it was linked in', async () => {
    const h = await createHarness();
    await h.linkedCustomer(9401);
    const me = await h.t.admin.createUser({ name: 'Иван' });
    await h.send(textUpdate({ id: 9402, languageCode: 'ru' }, `/link ${me.token}`));
    assert.equal(await admin(h, 'links', 'remove', '--chat', '9402'), 0);
    assert.equal(await admin(h, 'links', 'remove', '--chat', '9402'), 1);
    const mark = h.calls.length;
    const jobs = startBackgroundJobs(h.bot);
    const notice = await h.waitFor((c) => c.payload.chat_id === 9402, mark);
    await jobs.stop();
    assert.match(String(notice.payload.text), /Чат отвязан оператором/);
    assert.deepEqual(
      (await h.t.admin.listLinks()).map((l) => l.chatId),
      [9401],
    );
  });

  it('a chat the operator unlinked is stopped at once, though its token still works', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9501);
    const card = await newCard(h.t, me);
    assert.equal(await admin(h, 'links', 'remove', '--chat', '9501'), 0);
    const calls = await h.send(callbackUpdate({ id: 9501 }, `c:details:${card.id}`, 4));
    assert.equal(h.since(0, 'sendMessage').filter((c) => String(c.payload.text).includes('Card details')).length, 0);
    assert.ok(calls.some((c) => c.method === 'answerCallbackQuery' && /not linked/.test(String(c.payload.text))));
  });
});
