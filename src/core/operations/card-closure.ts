import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { newRecordId } from '../ids.js';
import type { ClosureHold, MoneyStore } from '../money-store/port.js';
import type { CardProvider } from '../provider/provider.js';
import { CardServiceError } from '../rules/errors.js';
import { closeStateRefusal, withdrawCooldownRefusal } from '../rules/rules.js';
import type { CoreSettings } from '../settings.js';
import { checkCardId, findOwnedCard } from './card-queries.js';
import { holdClosure, settleClosure, toClosureSettled } from './closure-statements.js';
import { holdOnce } from './withdraw-statements.js';
import { PENDING_GRACE_MS, type PendingOperations } from './pending-operations.js';
import type { Caller, CloseResult } from './views.js';

/** What a closure needs: the database, the clock, the provider that terminates the card, the withdrawals' cooldown it shares. */
export interface ClosureDeps {
  db: Db;
  /** Postgres takes each of the closure's transactions as one statement (`closure-statements.ts`). */
  onPostgres: boolean;
  clock: Clock;
  provider: CardProvider;
  settings: Pick<CoreSettings, 'withdrawCooldownSeconds'>;
  pending: PendingOperations;
  money: MoneyStore;
}

/** How long a close refused by another close's cooldown waits for that close's outcome, and how often it looks. */
const CLOSE_WAIT_MS = 30_000;
const CLOSE_POLL_MS = 20;

/**
 * Closes for good: the provider terminates the card, its whole balance returns to the wallet.
 * Checked in this order: card found, already closed, not ready, cooldown (shared with
 * withdrawals; the attempt then counts even when the provider refuses), provider. The balance is
 * held off the card (a `Pending` line) before the provider is called, outside any transaction, and
 * reaches the wallet once it has terminated the card (the line `Approved`, with anything credited
 * to the card meanwhile); a provider refusal gives it back to the card (the line removed).
 */
export async function close(deps: ClosureDeps, caller: Caller, cardId: string): Promise<CloseResult> {
  const { db, clock, provider, pending, money } = deps;
  const now = clock.now();
  const operationId = newRecordId();
  let card: HeldCard;
  let hold: ClosureHold;
  try {
    const held = deps.onPostgres ? await holdInOneStatement(deps, caller, cardId, operationId, now) : undefined;
    hold = held ? { caller, cardId, operationId, now, card: held } : await money.holdClosure({ caller, cardId, operationId, now });
    card = hold.card;
  } catch (refusal) {
    // A close that ran beside this one took the cooldown first: say what it did, once it is done.
    const closedMeanwhile =
      refusal instanceof CardServiceError &&
      refusal.code === 'WITHDRAW_COOLDOWN' &&
      (await closedOnceSettled({ db, pending }, caller, cardId));
    throw closedMeanwhile ? new CardServiceError('ALREADY_CLOSED') : refusal;
  }
  await pending.callProvider(operationId, 'close', () => provider.terminate(card.provider_card_id));
  if (deps.onPostgres) {
    const settled = await settleInOneStatement(deps, caller, card, operationId, now);
    if (settled) return settled;
  }
  return money.settleClosure(hold);
}

/** What the closure's last transaction needs of the card its first one held. */
type HeldCard = ClosureHold['card'];

/**
 * Postgres: the closure's first transaction as one statement (`holdClosure`), committed on its own. The
 * same refusals from the same named checks in the same order, from what the statement found. Undefined,
 * having done nothing, when the caller has operations pending past the grace period: the path in steps,
 * which recovers them first, takes over (rare).
 */
async function holdInOneStatement(
  { db, settings, pending }: ClosureDeps,
  caller: Caller,
  cardId: string,
  operationId: string,
  now: Date,
): Promise<HeldCard | undefined> {
  checkCardId(cardId);
  const held = await holdOnce(
    holdClosure,
    db,
    cardId,
    caller.userId,
    now.toISOString(),
    new Date(now.getTime() - settings.withdrawCooldownSeconds * 1000).toISOString(),
    new Date(now.getTime() - PENDING_GRACE_MS).toISOString(),
    operationId,
    await pending.inFlightAccount(db),
    `hold:${operationId}`,
  );
  if (held.stale) return undefined;
  const { card } = held;
  if (!card) throw new CardServiceError('CARD_NOT_FOUND');
  const refused =
    closeStateRefusal({ status: card.status, provider_ready: card.providerReady }) ??
    (card.cooled ? undefined : withdrawCooldownRefusal(card.last_withdraw_attempt_at, settings, now, { refused: true }));
  if (refused) throw refused;
  if (card.available > 0 && held.heldJournalId === undefined) throw new Error('Card balance changed during closure');
  return { id: cardId, account_id: card.account_id, currency: card.currency, provider_card_id: card.provider_card_id };
}

/**
 * Postgres: the closure's last transaction as one statement (`settleClosure`), committed on its own.
 * Undefined, having done nothing, when the operation is no longer pending or the card was closed
 * meanwhile: the path in steps then says which, and releases what the operation held (rare).
 */
async function settleInOneStatement(
  { pending }: ClosureDeps,
  caller: Caller,
  card: HeldCard,
  operationId: string,
  now: Date,
): Promise<CloseResult | undefined> {
  const settled = await pending.finishWhole(operationId, async (ex) =>
    toClosureSettled(
      await settleClosure.executeTakeOne(
        ex,
        operationId,
        card.id,
        caller.userId,
        caller.walletAccountId,
        await pending.inFlightAccount(ex),
        now.toISOString(),
        `close:${card.id}`,
        `close-rest:${card.id}`,
        newRecordId(),
      ),
    ),
  );
  if (!settled.taken) return undefined;
  return {
    cardId: card.id,
    balanceWithdrawn: settled.balance,
    transactionId: settled.transactionId,
    invoiceId: settled.invoiceId,
    newWalletBalance: settled.walletBalance,
  };
}

/**
 * Whether the card is closed once no closure of it waits on the provider any more (a close refused
 * by the cooldown another close took answers with that close's outcome, as when they queued on a lock).
 */
async function closedOnceSettled({ db, pending }: Pick<ClosureDeps, 'db' | 'pending'>, caller: Caller, cardId: string): Promise<boolean> {
  for (let waited = 0; waited < CLOSE_WAIT_MS && (await pending.closing(cardId)); waited += CLOSE_POLL_MS) {
    await sleep(CLOSE_POLL_MS);
  }
  return (await findOwnedCard(db, caller, cardId)).status === 'closed';
}
