import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Challenge, CHALLENGE_VALIDITY_MS, openChallenge } from '../../src/core/operations/challenges.js';
import { newCard, newCustomer, type Customer, type TestCore } from '../helpers/core.js';
import { coreOn, dialects } from './dialects.js';

// Issue 33, section 5: a purchase to approve in chat, answered once, by the card's owner, before it expires.

for (const dialect of dialects()) {
  describe(`purchase approval in chat (${dialect})`, () => {
    let t: TestCore;
    let alice: Customer;
    let bob: Customer;
    let cardId: string;

    before(async () => {
      t = await coreOn(dialect);
      alice = await newCustomer(t, 100_000, 'Alice');
      bob = await newCustomer(t, 100_000, 'Bob');
      cardId = (await newCard(t, alice)).id;
    });
    after(() => t.close());

    const db = () => t.database.db;
    /** A challenge for Alice's card, as the provider (the sandbox) opens it. */
    async function open(amount = 4_210, merchant = 'STEAM', validForMs?: number): Promise<Challenge> {
      const card = await db().selectFrom('cards').selectAll().where('id', '=', cardId).executeTakeFirstOrThrow();
      return openChallenge({ db: db(), clock: t.clock }, card, { amount, merchant, validForMs });
    }
    const stored = (id: string) => db().selectFrom('card_challenges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('a challenge is valid 5 minutes and its push to the chat is recorded with it', async () => {
      const challenge = await open();
      assert.equal(challenge.status, 'pending');
      assert.equal(Date.parse(challenge.expiresAt) - Date.parse(challenge.createdAt), CHALLENGE_VALIDITY_MS);
      const rows = await db().selectFrom('outbox').select(['kind', 'payload', 'user_id']).where('kind', '=', 'challenge').execute();
      const event = rows.map((r) => ({ userId: r.user_id, ...JSON.parse(r.payload) })).find((e) => e.challengeId === challenge.id);
      assert.deepEqual(
        { userId: event?.userId, amount: event?.amount, merchant: event?.merchantName, expiresAt: event?.expiresAt },
        { userId: alice.userId, amount: 4_210, merchant: 'STEAM', expiresAt: challenge.expiresAt },
      );
      assert.ok(event.cardName && event.maskedPan, 'the push names the card');
    });

    test('the owner answers once: a second answer is not taken and changes nothing', async () => {
      const challenge = await open();
      const first = await t.core.answerChallenge(alice.caller, challenge.id, 'approve');
      assert.equal(first.answered, true);
      assert.equal(first.challenge.status, 'approved');
      const answeredAt = (await stored(challenge.id)).answered_at;
      t.clock.advance(1_000);
      const second = await t.core.answerChallenge(alice.caller, challenge.id, 'decline');
      assert.equal(second.answered, false);
      assert.equal(second.challenge.status, 'approved');
      const row = await stored(challenge.id);
      assert.deepEqual({ status: row.status, answeredAt: row.answered_at }, { status: 'approved', answeredAt });
    });

    test("only the card's owner answers: another user's answer reads like a missing card and changes nothing", async () => {
      const challenge = await open();
      await assert.rejects(t.core.answerChallenge(bob.caller, challenge.id, 'approve'), { code: 'CARD_NOT_FOUND' });
      await assert.rejects(t.core.answerChallenge(alice.caller, 'not-a-challenge', 'approve'), { code: 'CARD_NOT_FOUND' });
      assert.equal((await stored(challenge.id)).status, 'pending');
      assert.equal((await t.core.answerChallenge(alice.caller, challenge.id, 'decline')).challenge.status, 'declined');
    });

    test('an answer after the expiry is refused and changes nothing; the list shows it expired all the same', async () => {
      const challenge = await open();
      t.clock.advance(CHALLENGE_VALIDITY_MS);
      const late = await t.core.answerChallenge(alice.caller, challenge.id, 'approve');
      assert.deepEqual({ answered: late.answered, status: late.challenge.status }, { answered: false, status: 'expired' });
      const row = await stored(challenge.id);
      assert.deepEqual({ status: row.status, answeredAt: row.answered_at }, { status: 'pending', answeredAt: null });
      const listed = (await t.core.listChallenges(alice.caller, cardId)).find((c) => c.id === challenge.id);
      assert.equal(listed?.status, 'expired');
    });

    test('an answer to a challenge whose card was frozen or closed meanwhile is refused and changes nothing', async () => {
      for (const [name, stop] of [
        ['Frozen meanwhile', (id: string) => t.core.freeze(alice.caller, id)],
        ['Closed meanwhile', (id: string) => t.core.close(alice.caller, id)],
      ] as const) {
        const fresh = await newCard(t, alice, name);
        const card = await db().selectFrom('cards').selectAll().where('id', '=', fresh.id).executeTakeFirstOrThrow();
        const challenge = await openChallenge({ db: db(), clock: t.clock }, card, { amount: 300, merchant: 'STEAM' });
        await stop(fresh.id);
        const answer = await t.core.answerChallenge(alice.caller, challenge.id, 'approve');
        assert.deepEqual({ answered: answer.answered, status: answer.challenge.status }, { answered: false, status: 'pending' }, name);
        assert.deepEqual([(await stored(challenge.id)).status, (await stored(challenge.id)).answered_at], ['pending', null], name);
      }
    });

    test('concurrent answers: exactly one is taken, and the stored outcome is its', async () => {
      const challenge = await open();
      const answers = Array.from({ length: 12 }, (_, i): 'approve' | 'decline' => (i % 2 === 0 ? 'approve' : 'decline'));
      const outcomes = await Promise.all(answers.map((answer) => t.core.answerChallenge(alice.caller, challenge.id, answer)));
      const taken = outcomes.flatMap((o, i) => (o.answered ? [answers[i]!] : []));
      assert.equal(taken.length, 1, 'one answer taken');
      const status = taken[0] === 'approve' ? 'approved' : 'declined';
      assert.equal((await stored(challenge.id)).status, status);
      assert.ok(outcomes.every((o) => o.challenge.status === status || !o.answered));
    });

    test("the card's recent challenges with their outcomes, newest first; another user's card is not found", async () => {
      const fresh = await newCard(t, alice, 'Travel');
      const card = await db().selectFrom('cards').selectAll().where('id', '=', fresh.id).executeTakeFirstOrThrow();
      const deps = { db: db(), clock: t.clock };
      const approved = await openChallenge(deps, card, { amount: 100, merchant: 'A' });
      await t.core.answerChallenge(alice.caller, approved.id, 'approve');
      t.clock.advance(1_000);
      const pending = await openChallenge(deps, card, { amount: 250, merchant: 'B' });
      const list = await t.core.listChallenges(alice.caller, fresh.id);
      assert.deepEqual(
        list.map((c) => [c.id, c.status, c.amount, c.merchantName]),
        [
          [pending.id, 'pending', 250, 'B'],
          [approved.id, 'approved', 100, 'A'],
        ],
      );
      await assert.rejects(t.core.listChallenges(bob.caller, fresh.id), { code: 'CARD_NOT_FOUND' });
    });

    test('simulate3ds waits for the answer given elsewhere, and ends at the expiry with `expired` recorded', async () => {
      const waiting = t.admin.simulate3ds(cardId, 1_999, 'SHOP', { pollMs: 5 });
      const id = await pendingChallengeOf(t, 'SHOP');
      await t.core.answerChallenge(alice.caller, id, 'decline');
      assert.equal((await waiting).outcome, 'declined');

      const unanswered = t.admin.simulate3ds(cardId, 500, 'LATE', { pollMs: 5, validForMs: 2_000 });
      const late = await pendingChallengeOf(t, 'LATE');
      t.clock.advance(2_000);
      const result = await unanswered;
      assert.deepEqual({ outcome: result.outcome, id: result.challenge.id }, { outcome: 'expired', id: late });
      assert.equal((await stored(late)).status, 'expired');
    });

    test('simulate3ds refuses a card that is not active, a bad amount and a validity over 5 minutes', async () => {
      await assert.rejects(t.admin.simulate3ds(cardId, 0, 'X'), /amount must be positive/);
      await assert.rejects(t.admin.simulate3ds(cardId, 100, 'X', { validForMs: CHALLENGE_VALIDITY_MS + 1 }), /validity/);
      const frozen = await newCard(t, alice, 'Frozen');
      await t.core.freeze(alice.caller, frozen.id);
      await assert.rejects(t.admin.simulate3ds(frozen.id, 100, 'X'), /is frozen/);
    });
  });
}

/** The id of the pending challenge at `merchant`, once the sandbox has opened it. */
async function pendingChallengeOf(t: TestCore, merchant: string): Promise<string> {
  for (;;) {
    const row = await t.database.db
      .selectFrom('card_challenges')
      .select('id')
      .where('merchant_name', '=', merchant)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (row) return row.id;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
