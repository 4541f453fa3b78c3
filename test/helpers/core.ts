import { FakeClock } from '../../src/infra/clock.js';
import type { Cents } from '../../src/core/ledger/money.js';
import type { Caller } from '../../src/core/operations/views.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import type { CoreSettings } from '../../src/core/settings.js';
import type { GroupCommitOptions } from '../../src/db/sqlite/index.js';

export const TEST_CARD_DATA_KEY = Buffer.alloc(32, 7);

export interface TestCore extends CoreRuntime {
  clock: FakeClock;
}

/** A migrated, seeded in-memory SQLite core with a fake clock (or the database `url` when given). */
export async function createTestCore(
  options: { url?: string; settings?: Partial<CoreSettings>; asyncIssue?: boolean; groupCommit?: GroupCommitOptions } = {},
): Promise<TestCore> {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const runtime = await startCore({
    databaseUrl: options.url ?? ':memory:',
    cardDataKey: TEST_CARD_DATA_KEY,
    clock,
    settings: options.settings,
    sandboxAsyncIssue: options.asyncIssue,
    groupCommit: options.groupCommit,
  });
  return { ...runtime, clock };
}

export interface Customer {
  userId: string;
  token: string;
  caller: Caller;
}

/** A user with a wallet funded with `deposit` cents, its token and the caller it authenticates as. */
export async function newCustomer(t: CoreRuntime, deposit: Cents = 100_000, name = 'Alice'): Promise<Customer> {
  const { userId, token } = await t.admin.createUser({ name, deposit });
  return { userId, token, caller: await t.core.authenticate(token) };
}

/** The first enabled BIN of the given category, and the cheapest plan. */
export async function catalogue(t: CoreRuntime, category: 'Wallet' | 'Online' = 'Online') {
  const bins = await t.core.listBins();
  const bin = bins.find((b) => b.wallet === (category === 'Wallet') && b.initialBalance === 0) ?? bins[0]!;
  const plans = await t.core.listPlans();
  return { bin, plan: plans[0]!, bins, plans };
}

/** A card for the customer on the cheapest plan. */
export async function newCard(t: CoreRuntime, customer: Customer, name = 'Ads', category: 'Wallet' | 'Online' = 'Online') {
  const { bin, plan } = await catalogue(t, category);
  return t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name });
}
