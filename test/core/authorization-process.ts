// A process deciding authorizations on a database others decide on too: spawned by authorization-model.test.ts.
// Every process asks the same provider transaction ids (each its own order) and clears every other one;
// prints one JSON line with how many answers were first ones (not replays).
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

const [url, cardId, count, offset] = process.argv.slice(2) as [string, string, string, string];
const t = await startCore({ databaseUrl: url, cardDataKey: TEST_CARD_DATA_KEY, clock: new FakeClock('2026-03-01T12:00:00.000Z') });
console.log('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
let decided = 0;
const n = Number(count);
await Promise.all(
  Array.from({ length: 4 }, async (_, lane) => {
    for (let k = lane; k < n; k += 4) {
      const i = (k + Number(offset)) % n;
      const providerTransactionId = `shared-${i}`;
      const merchant = { name: 'Shop', mcc: '5999', country: 'US' };
      const decision = await t.core.authorize({
        cardId,
        amount: 100 + i,
        currency: 'USD',
        merchant,
        kind: 'purchase',
        providerTransactionId,
      });
      if (!decision.replayed) decided += 1;
      if (decision.approved && i % 2 === 0) await t.core.clearAuthorization({ providerTransactionId });
    }
  }),
);
await t.close();
console.log(JSON.stringify({ decided }));
