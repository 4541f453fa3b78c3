import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTestCore, newCard, newCustomer } from './helpers/core.js';

test('a card is created, topped up and read back', async () => {
  const t = await createTestCore();
  const alice = await newCustomer(t, 100_000);
  const card = await newCard(t, alice);
  const result = await t.core.topup(alice.caller, card.id, { amount: 2_000 });
  assert.equal(result.newCardBalance, 2_000);
  const ledger = await t.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.equal(ledger.total, 0);
  await t.close();
});
