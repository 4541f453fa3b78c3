// A core in an OS process of its own, to be killed (SIGKILL) by holds-crash.test.ts while a withdrawal, a
// closure and a creation each wait on the card provider, which never answers here. Prints `reached <call>`
// once each call is made (so after the operation's first transaction committed), and keeps topping up a
// card of another user meanwhile, so that the kill finds the database under load.
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

interface Plan {
  token: string;
  withdrawCardId: string;
  closeCardId: string;
  binId: string;
  planId: number;
  load: { token: string; cardId: string };
}

const [url, at, json] = process.argv.slice(2) as [string, string, string];
const plan = JSON.parse(json) as Plan;
const t = await startCore({
  databaseUrl: url,
  cardDataKey: TEST_CARD_DATA_KEY,
  clock: new FakeClock(at),
  settings: { topupCooldownSeconds: 0, providerTimeoutMs: 600_000 },
});
for (const call of ['withdraw', 'terminate', 'issue'] as const) {
  t.provider[call] = () => {
    process.stdout.write(`reached ${call}\n`);
    return new Promise<never>(() => undefined);
  };
}

const loader = await t.core.authenticate(plan.load.token);
void (async () => {
  for (;;) await t.core.topup(loader, plan.load.cardId, { amount: 500 });
})();

const caller = await t.core.authenticate(plan.token);
void t.core.withdraw(caller, plan.withdrawCardId, { amount: 1_500 });
void t.core.close(caller, plan.closeCardId);
void t.core.createCard(caller, { bin_id: plan.binId, planId: plan.planId, name: 'Mid-issue' });
