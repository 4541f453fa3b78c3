import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHttpServer } from '../../src/api/server.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, newCustomer } from '../helpers/core.js';

test("a token's last use is written once a minute, however many requests cross the minute together", async (ctx) => {
  const t = await createTestCore();
  const app = createHttpServer({ core: t.core, db: t.database.db, logger: createLogger('silent'), clock: t.clock });
  ctx.after(async () => {
    await app.close();
    await t.close();
  });
  const alice = await newCustomer(t);
  const rowsWritten = () => (t.database.sqlite!.prepare('select total_changes() as n').get() as { n: number }).n;
  const readWallet = () =>
    app.inject({ method: 'GET', url: '/api/v1/wallet/balance', headers: { authorization: `Bearer ${alice.token}` } });
  const atOnce = async (n: number) => {
    const replies = await Promise.all(Array.from({ length: n }, readWallet));
    assert.ok(replies.every((r) => r.statusCode === 200));
  };

  t.clock.advance(60_000);
  const before = rowsWritten();
  await atOnce(20);
  assert.equal(rowsWritten() - before, 1, 'one write for the 20 requests');
  t.clock.advance(30_000);
  await atOnce(20);
  assert.equal(rowsWritten() - before, 1, 'none again within the minute');
  t.clock.advance(30_000);
  await atOnce(1);
  assert.equal(rowsWritten() - before, 2, 'one once the minute has passed');
});
