// A core under batched load in an OS process of its own, to be killed (SIGKILL) by group-commit-crash.test.ts.
// Tops up each card given, all at once and again and again, and prints `ack <transaction id>` for each
// top-up the core reported done: that line is written only after the operation's commit returned.
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

const [file, at, json] = process.argv.slice(2) as [string, string, string];
const cards = JSON.parse(json) as { token: string; cardId: string }[];
const t = await startCore({
  databaseUrl: file,
  cardDataKey: TEST_CARD_DATA_KEY,
  clock: new FakeClock(at),
  settings: { topupCooldownSeconds: 0 },
});

async function keepToppingUp(token: string, cardId: string): Promise<void> {
  const caller = await t.core.authenticate(token);
  for (;;) {
    const done = await t.core.topup(caller, cardId, { amount: 500 });
    process.stdout.write(`ack ${done.transactionId}\n`);
  }
}

console.log('started');
await Promise.all(cards.map((c) => keepToppingUp(c.token, c.cardId)));
