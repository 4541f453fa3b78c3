import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PENDING_GRACE_MS } from '../src/core/operations/pending-operations.js';
import { startHousekeeping } from '../src/app/housekeeping.js';
import { createTestCore, newCard, newCustomer } from './helpers/core.js';
import { capturedLogger } from './helpers/log.js';

test('housekeeping settles an operation a crash left waiting on the provider, and logs it once without card data', async (ctx) => {
  const t = await createTestCore();
  ctx.after(() => t.close());
  const alice = await newCustomer(t, 100_000);
  const card = await newCard(t, alice);
  await t.core.topup(alice.caller, card.id, { amount: 5_000 });
  const { pan } = await t.core.getSensitiveDetails(alice.caller, card.id);
  t.provider.withdraw = async () => {
    throw new Error('killed');
  };
  await assert.rejects(t.core.withdraw(alice.caller, card.id, { amount: 1_000 }), /killed/);
  assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 4_000);

  t.clock.advance(PENDING_GRACE_MS);
  const { logger, text } = capturedLogger();
  await startHousekeeping(t, logger).stop();
  assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 5_000);
  assert.equal(text().match(/settled interrupted provider operations/g)?.length, 1);
  assert.ok(!text().includes(pan), 'no card number in the log');
  await startHousekeeping(t, logger).stop();
  assert.equal(text().match(/settled interrupted provider operations/g)?.length, 1, 'settled once');
  assert.deepEqual((await t.admin.checkLedger()).differences, []);
});
