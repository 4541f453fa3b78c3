import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type OtpEvent, recordEvent } from '../../src/core/operations/events.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';

// An OTP flood (a broken or hostile card service: 2,000 new codes on one card) must not hold up anyone
// else's codes: a chat's pushes are paced, its codes merged into few messages, and other chats go first.

const FLOOD = 2_000;

describe('an OTP flood on one card', () => {
  let e: E2eBot;
  before(async () => {
    e = await startE2eBot('otp-flood', { otpTtlSeconds: 300 });
  });
  after(() => e.stop());

  /** A user with a card, linked in chat `chatId`. */
  async function linked(chatId: number, name: string) {
    const customer = await newCustomer(e.runtime, 100_000, name);
    const card = await newCard(e.runtime, customer, name);
    const user = e.server.user(chatId);
    const step = user.send(customer.token);
    await e.server.nextMessage(chatId, step.mark, 'Linked');
    return { customer, card };
  }

  it("the other user's code arrives within 2 s; the flooded chat gets few messages, and every code in the end", {
    timeout: 60_000,
  }, async () => {
    const alice = await linked(9701, 'Alice');
    const bob = await linked(9702, 'Bob');
    const before = e.server.botMessages(9701).length;
    const mark = e.server.mark();

    // 2,000 codes for Alice's card, committed at once.
    const at = new Date().toISOString();
    const codes = Array.from({ length: FLOOD }, (_, i) => String(100_000 + i));
    await e.runtime.database.db.transaction().execute(async (trx) => {
      for (const [i, code] of codes.entries()) {
        const event: OtpEvent = {
          kind: 'otp',
          otpId: `flood-${i}`,
          cardId: alice.card.id,
          cardName: alice.card.name,
          maskedPan: alice.card.maskedPan,
          code,
          amount: 100,
          currency: 'USD',
          merchantName: 'Flood',
          createdAt: at,
        };
        await recordEvent(trx, alice.customer.userId, event, at);
      }
    });
    // The bot is busy with them when Bob's code comes.
    await e.server.waitForCall((c) => c.method === 'sendMessage' && c.payload.chat_id === 9701, mark);
    const bobs = await e.runtime.admin.simulateOtp(bob.card.id, 1_500, 'Bookshop');
    const sentAt = Date.now();
    while (!e.server.botMessages(9702).some((m) => m.text.includes(bobs.code))) {
      assert.ok(
        Date.now() - sentAt < 2_000,
        `Bob's code did not arrive within 2 s (Alice's chat had ${e.server.botMessages(9701).length - before} messages)`,
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const floodedSoFar = e.server.botMessages(9701).length - before;
    assert.ok(floodedSoFar <= 10, `Alice's chat got ${floodedSoFar} messages in that time`);

    // In the end every code is delivered: shown, or counted in the message that merged it.
    const deadline = Date.now() + 30_000;
    while ((await e.runtime.core.events.waiting(FLOOD + 10)) > 0) {
      assert.ok(Date.now() < deadline, 'the flood was not delivered within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const texts = e.server
      .botMessages(9701)
      .slice(before)
      .map((m) => m.text);
    assert.ok(texts.length < 20, `Alice's chat got ${texts.length} messages for the flood`);
    const shown = new Set(texts.flatMap((text) => text.match(/\b1\d{5}\b/g) ?? []));
    const merged = texts.reduce(
      (sum, text) => sum + Number((/([\d,]+) earlier codes? not shown/.exec(text)?.[1] ?? '0').replaceAll(',', '')),
      0,
    );
    assert.equal(shown.size + merged, FLOOD, texts.join('\n---\n'));
    // The newest code is always among those shown.
    assert.ok(shown.has(codes.at(-1)!), 'the newest code is shown');
  });
});
