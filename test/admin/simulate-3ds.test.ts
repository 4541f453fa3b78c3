import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminCommands } from '../helpers/admin.js';
import { createTestCore, newCard, newCustomer, type Customer, type TestCore } from '../helpers/core.js';

// `simulate 3ds`: the command asks, waits for the cardholder's answer (here given through the core, as the
// bot does), prints it; the chat's side is in test/bot/challenges-e2e.test.ts.

describe('admin simulate 3ds', () => {
  let t: TestCore;
  let alice: Customer;
  let cardId: string;
  before(async () => {
    t = await createTestCore();
    alice = await newCustomer(t);
    cardId = (await newCard(t, alice)).id;
  });
  after(() => t.close());
  const admin = adminCommands(() => t);

  /** The challenge the command opened, once it has. */
  async function opened(merchant: string): Promise<string> {
    for (;;) {
      const [challenge] = (await t.core.listChallenges(alice.caller, cardId)).filter((c) => c.merchantName === merchant);
      if (challenge) return challenge.id;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  test('prints declined once the cardholder declines (--json: the outcome, the challenge, the amount)', async () => {
    const running = admin('simulate', '3ds', '--card', cardId, '--amount', '42.10', '--merchant', 'STEAM', '--json');
    await t.core.answerChallenge(alice.caller, await opened('STEAM'), 'decline');
    const result = await running;
    assert.equal(result.code, 0, result.err);
    const json = result.json();
    assert.deepEqual(
      { outcome: json.outcome, amount: json.amount, merchant: json.merchant },
      { outcome: 'declined', amount: '42.10', merchant: 'STEAM' },
    );
  });

  test('prints expired at the end of its validity (--valid-for), never waiting longer', async () => {
    const running = admin('simulate', '3ds', '--card', cardId, '--amount', '5', '--merchant', 'LATE', '--valid-for', '30');
    await opened('LATE');
    t.clock.advance(30_000);
    const result = await running;
    assert.deepEqual({ code: result.code, out: result.out }, { code: 0, out: 'expired' });
  });

  test('refuses a missing merchant, a bad validity and an unknown card', async () => {
    const refused = [
      await admin('simulate', '3ds', '--card', cardId, '--amount', '5'),
      await admin('simulate', '3ds', '--card', cardId, '--amount', '5', '--merchant', 'X', '--valid-for', '301'),
      await admin('simulate', '3ds', '--card', cardId, '--amount', '5', '--merchant', 'X', '--valid-for', 'soon'),
      await admin('simulate', '3ds', '--card', '00000000-0000-4000-8000-000000000000', '--amount', '5', '--merchant', 'X'),
    ];
    assert.deepEqual(
      refused.map((r) => r.code !== 0),
      [true, true, true, true],
    );
    assert.match(refused[1]!.err, /between 1 second and 5 minutes/);
    assert.match(refused[3]!.err, /No card with id/);
  });
});
