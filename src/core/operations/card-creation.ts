import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { MoneyStore } from '../money-store/port.js';
import type { CardProvider } from '../provider/provider.js';
import type { CreateCardInput, inputGuards } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import { accountBalance } from './card-queries.js';
import { binAndPlan, discounted, usableCoupon } from './card-creation-checks.js';
import type { PendingOperations } from './pending-operations.js';
import type { Caller, Card, CreationQuote } from './views.js';

/** What a card's creation needs: the database, the clock, the provider that issues it, the money store that holds and takes its fee. */
export interface CreationDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
  guard: ReturnType<typeof inputGuards>;
  pending: PendingOperations;
  money: MoneyStore;
}

/**
 * What creating a card would cost (an extension for the bot's summary): the fee after the coupon
 * and the wallet after it. Refuses an unknown BIN, plan or unusable coupon; redeems nothing.
 */
export async function quoteCreateCard({ db, clock, guard }: CreationDeps, caller: Caller, input: CreateCardInput): Promise<CreationQuote> {
  guard.createCard(input);
  const { bin, plan } = await binAndPlan(db, input);
  const planFee = Number(plan.creation_fee);
  const coupon = input.coupon_id === undefined ? undefined : await usableCoupon(db, input.coupon_id, clock.now());
  const fee = discounted(planFee, coupon);
  const walletBalance = await accountBalance(db, caller.walletAccountId);
  return { planFee, fee, walletBalance, walletAfter: walletBalance - fee, initialBalance: Number(bin.initial_balance) };
}

/**
 * Creates a card: the plan's fee (less any coupon) from the wallet, the BIN's initial balance onto the
 * card. Checked in this order: BIN, plan, the BIN's initial balance within the plan's limit, coupon,
 * wallet, provider. The fee is held, the coupon redeemed and the card written in `processing` before
 * the provider issues it (outside any transaction); the card is then filled in and made `active`. A
 * provider refusal gives the fee and coupon back and removes the card. The two transactions are the
 * money store's (`holdCreation`, `settleCreation`).
 */
export async function createCard(
  { clock, provider, guard, pending, money }: CreationDeps,
  caller: Caller,
  input: CreateCardInput,
  hooks: OperationHooks<Card> = {},
): Promise<Card> {
  guard.createCard(input);
  const now = clock.now();
  const cardId = randomUUID();
  const hold = await money.holdCreation({ caller, input, cardId, now });
  const issued = await pending.callProvider(cardId, 'issue', () =>
    provider.issue({ bin: hold.bin.bin, country: hold.bin.country, name: input.name, type: input.type ?? 'multi_use', reference: cardId }),
  );
  return money.settleCreation(hold, issued, hooks);
}
