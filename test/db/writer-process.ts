// A second OS process writing the same SQLite file: spawned by two-processes.test.ts.
// Prints one JSON line with what it moved; exits non-zero if anything but a refusal reached it.
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

// `mixed`: deposits, top-ups (no cooldown), purchases and refunds; `cooldown`: only top-ups, with the
// spec's 2-minute cooldown on a clock that stands still, so across processes exactly one may pass.
const [file, token, cardId, userId, rounds, mode = 'mixed'] = process.argv.slice(2) as [string, string, string, string, string, string?];
const t = await startCore({
  databaseUrl: file,
  cardDataKey: TEST_CARD_DATA_KEY,
  clock: new FakeClock('2026-03-01T12:00:00.000Z'),
  settings: { topupCooldownSeconds: mode === 'cooldown' ? 120 : 0 },
});
const caller = await t.core.authenticate(token);
// Ready; start writing when the parent says so, so that both processes write at the same time.
console.log('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const moved = { deposits: 0, fees: 0, purchases: 0, refunds: 0, refused: 0, toppedUp: 0 };
for (let i = 0; mode === 'cooldown' && i < Number(rounds); i++) {
  try {
    const topup = await t.core.topup(caller, cardId, { amount: 500 });
    moved.fees += topup.platformFee;
    moved.toppedUp += 1;
  } catch (error) {
    if (!isCardServiceError(error) || error.code !== 'TOPUP_COOLDOWN') throw error;
    moved.refused += 1;
  }
}
for (let i = 0; mode === 'mixed' && i < Number(rounds); i++) {
  await t.admin.deposit(userId, 1_000);
  moved.deposits += 1_000;
  try {
    const topup = await t.core.topup(caller, cardId, { amount: 500 + (i % 7) });
    moved.fees += topup.platformFee;
    moved.toppedUp += 1;
  } catch (error) {
    if (!isCardServiceError(error)) throw error;
    moved.refused += 1;
  }
  const purchase = await t.admin.simulatePurchase(cardId, 300 + (i % 5));
  if (purchase.status === 'Approved') moved.purchases += 300 + (i % 5);
  if (i % 4 === 0) {
    const refund = await t.admin.simulateRefund(cardId, 50);
    if (refund.status === 'Approved') moved.refunds += 50;
  }
}
await t.close();
console.log(JSON.stringify(moved));
