import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { retiredKeyError, sealWith } from '../keys/card-data-keys.js';
import type { CardDataCipher } from '../keys/secrets.js';
import { SYSTEM_ACCOUNTS, type SystemAccountIds } from '../ledger/ledger.js';
import type { IssuingBin, MoneyStore } from '../money-store/port.js';
import { NO_ADDRESS } from '../money-store/portable/creation.js';
import { maskPan } from '../provider/luhn.js';
import type { CardProvider, IssuedCard } from '../provider/provider.js';
import { CardServiceError } from '../rules/errors.js';
import { couponRefusal, creationFeeRefusal, initialBalanceRefusal } from '../rules/rules.js';
import type { CreateCardInput, inputGuards } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import { accountBalance } from './card-queries.js';
import { binAndPlan, discounted, usableCoupon } from './card-creation-checks.js';
import { holdCreation, settleCreation, toCreationHold, toCreationSettled } from './creation-statements.js';
import { newRecordId } from '../ids.js';
import { PENDING_GRACE_MS, type PendingOperations } from './pending-operations.js';
import { toCard, type Caller, type Card, type CreationQuote } from './views.js';

/** What a card's creation needs: the database, the clock, the provider that issues it, the cipher that seals its data. */
export interface CreationDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
  cipher: CardDataCipher;
  guard: ReturnType<typeof inputGuards>;
  pending: PendingOperations;
  /** Postgres takes each of the creation's transactions as one statement (`creation-statements.ts`). */
  onPostgres: boolean;
  systemAccounts: SystemAccountIds;
  money: MoneyStore;
}

/** What the creation's last transaction writes a card from. */
interface IssuedCardRecord {
  caller: Caller;
  cardId: string;
  bin: IssuingBin;
  issued: IssuedCard;
  at: string;
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
 * provider refusal gives the fee and coupon back and removes the card. On Postgres each transaction is
 * one statement (`creation-statements.ts`).
 */
export async function createCard(
  deps: CreationDeps,
  caller: Caller,
  input: CreateCardInput,
  hooks: OperationHooks<Card> = {},
): Promise<Card> {
  const { clock, provider, guard, pending } = deps;
  guard.createCard(input);
  const now = clock.now();
  const cardId = randomUUID();
  const request = { caller, input, cardId, now };
  const held = deps.onPostgres ? await holdInOneStatement(deps, caller, input, cardId, now) : undefined;
  const hold = held ? { ...request, bin: held } : await deps.money.holdCreation(request);
  const { bin } = hold;
  const issued = await pending.callProvider(cardId, 'issue', () =>
    provider.issue({ bin: bin.bin, country: bin.country, name: input.name }),
  );
  const record = { caller, cardId, bin, issued, at: now.toISOString() };
  if (deps.onPostgres) return pending.finishWhole(cardId, (ex) => settleInOneStatement(deps, ex, record), hooks);
  return deps.money.settleCreation(hold, issued, hooks);
}

/**
 * Postgres: the creation's first transaction as one statement (`holdCreation`), committed on its own; a
 * refusal has done nothing. The same refusals from the same named checks in the same order, from what the
 * statement found. Undefined, having done nothing, when the caller has operations pending past the grace
 * period: the path in steps, which recovers them first, takes over (rare).
 */
async function holdInOneStatement(
  { db, pending }: CreationDeps,
  caller: Caller,
  input: CreateCardInput,
  cardId: string,
  now: Date,
): Promise<IssuingBin | undefined> {
  const row = await holdCreation.executeTakeOne(
    db,
    caller.userId,
    caller.walletAccountId,
    input.bin_id,
    input.planId,
    input.coupon_id ?? null,
    now.toISOString(),
    new Date(now.getTime() - PENDING_GRACE_MS).toISOString(),
    cardId,
    input.name,
    `tmp_${randomUUID()}`,
    JSON.stringify(NO_ADDRESS),
    await pending.inFlightAccount(db),
    `hold:${cardId}`,
  );
  const held = toCreationHold(row);
  if (held.stale) return undefined;
  const { bin, plan } = held;
  if (!bin) throw new CardServiceError('INVALID_BIN');
  if (!plan) throw new CardServiceError('INVALID_PLAN');
  const refused =
    initialBalanceRefusal({ initialBalance: bin.initial_balance }, plan) ??
    (input.coupon_id === undefined ? undefined : couponRefusal(held.coupon, now));
  if (refused) throw refused;
  if (held.fee === undefined) throw new Error(`Creation ${cardId} was neither refused nor priced`);
  if (held.heldJournalId === undefined) throw creationFeeRefusal({ fee: held.fee, available: held.walletAvailable }, { refused: true });
  return bin;
}

/**
 * Postgres: the creation's last transaction as one statement (`settleCreation`), committed on its own or
 * with `hooks.commit` beside it. When it did nothing, the refusal `finish`'s path would give, in its order:
 * the operation settled by the recovery, this process's key retired, the card no longer being created.
 */
async function settleInOneStatement(
  { cipher, pending, systemAccounts }: CreationDeps,
  ex: Executor,
  { caller, cardId, bin, issued, at }: IssuedCardRecord,
): Promise<Card> {
  const sealed = sealWith(cipher, cardId, issued);
  const row = await settleCreation.executeTakeOne(
    ex,
    cardId,
    caller.userId,
    cipher.fingerprint,
    maskPan(issued.pan),
    sealed.pan_encrypted,
    sealed.cvv_encrypted,
    issued.exp,
    issued.providerCardId ?? `tmp_${randomUUID()}`,
    issued.providerCardId ? 1 : 0,
    JSON.stringify(issued.address),
    Number(bin.initial_balance),
    await systemAccounts(ex, SYSTEM_ACCOUNTS.revenue),
    await pending.inFlightAccount(ex),
    await systemAccounts(ex, SYSTEM_ACCOUNTS.promotions),
    at,
    `creation-fee:${cardId}`,
    `initial-balance:${cardId}`,
    newRecordId(),
  );
  const settled = toCreationSettled(row);
  if (settled.card) return toCard(settled.card);
  if (!settled.pending) throw new Error(`Pending operation ${cardId} was settled by the recovery meanwhile`);
  if (settled.currentKey !== cipher.fingerprint) throw retiredKeyError(cipher);
  throw new Error(`Card ${cardId} is no longer being created`);
}
