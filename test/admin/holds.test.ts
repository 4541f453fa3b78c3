import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { adminCommands } from '../helpers/admin.js';
import { newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { holdNextCall } from '../helpers/holds.js';
import { dialects, useCore } from '../core/dialects.js';

/** A customer with a card holding $50.00. */
async function fundedCard(t: TestCore) {
  const alice = await newCustomer(t, 100_000);
  const card = await newCard(t, alice);
  await t.core.topup(alice.caller, card.id, { amount: 5_000 });
  return { alice, card };
}

type ListedCard = { id: string; balance: string; holds: { kind: string; amount: string; since: string }[] };

for (const dialect of dialects()) {
  describe(`the admin command line shows what a card holds (${dialect})`, () => {
    test('a withdrawal held at the provider: cards list and users show say it is pending, in text and JSON; settled, nothing is', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const { alice, card } = await fundedCard(t);
      const call = holdNextCall(t, 'withdraw');
      const withdrawal = t.core.withdraw(alice.caller, card.id, { amount: 1_000 });
      await call.reached;

      const listed = await admin('cards', 'list', '--user', alice.userId);
      assert.match(listed.out, / {2}\$40\.00 \(withdrawal of \$10\.00 pending\) {2}/);
      const [json] = (await admin('cards', 'list', '--user', alice.userId, '--json')).json().cards as ListedCard[];
      assert.deepEqual([json?.balance, json?.holds.map((h) => [h.kind, h.amount])], ['40.00', [['withdrawal', '10.00']]]);
      assert.equal(json?.holds[0]?.since, t.clock.now().toISOString());
      const shown = await admin('users', 'show', alice.userId);
      assert.match(shown.out, / {2}\$40\.00 \(withdrawal of \$10\.00 pending\) {2}/);
      const shownJson = (await admin('users', 'show', alice.userId, '--json')).json().user.cards as ListedCard[];
      assert.deepEqual(
        shownJson[0]?.holds.map((h) => [h.kind, h.amount]),
        [['withdrawal', '10.00']],
      );

      call.release();
      await withdrawal;
      const settled = await admin('cards', 'list', '--user', alice.userId);
      assert.match(settled.out, / {2}\$40\.00 {2}/);
      assert.doesNotMatch(settled.out, /pending/);
      assert.deepEqual(((await admin('cards', 'list', '--json')).json().cards as ListedCard[]).find((c) => c.id === card.id)?.holds, []);
    });

    test('a closure held at the provider: the whole balance shows as a pending close; refused, the balance is back and nothing pending', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const admin = adminCommands(() => t);
      const { alice, card } = await fundedCard(t);
      const other = await newCard(t, alice, 'Other');
      const call = holdNextCall(t, 'terminate');
      const closure = t.core.close(alice.caller, card.id);
      await call.reached;

      const listed = await admin('cards', 'list');
      const line = (id: string) => listed.out.split('\n').find((l) => l.startsWith(id)) ?? '';
      assert.match(line(card.id), / {2}active {2}\$0\.00 \(close of \$50\.00 pending\) {2}/);
      assert.doesNotMatch(line(other.id), /pending/, 'another card holds nothing');
      const cards = (await admin('cards', 'list', '--user', alice.userId, '--json')).json().cards as ListedCard[];
      assert.deepEqual(
        cards.map((c) => [c.id, c.balance, c.holds.map((h) => [h.kind, h.amount])]),
        [
          [card.id, '0.00', [['close', '50.00']]],
          [other.id, '0.00', []],
        ],
      );

      call.release('busy');
      await assert.rejects(closure, /busy/);
      const after = await admin('cards', 'list', '--user', alice.userId);
      assert.match(after.out, / {2}\$50\.00 {2}/);
      assert.doesNotMatch(after.out, /pending/);
    });
  });
}
