import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { newRecordId } from '../ids.js';
import type { ClosureHold, MoneyStore } from '../money-store/port.js';
import type { CardProvider } from '../provider/provider.js';
import { CardServiceError } from '../rules/errors.js';
import { findOwnedCard } from './card-queries.js';
import type { PendingOperations } from './pending-operations.js';
import type { Caller, CloseResult } from './views.js';

/** What a closure needs: the database, the clock, the provider that terminates the card, the money store that holds and settles its balance. */
export interface ClosureDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
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
export async function close(deps: ClosureDeps, caller: Caller, cardId: string, options: { system?: boolean } = {}): Promise<CloseResult> {
  const { db, clock, provider, pending, money } = deps;
  // A closure of this card a crash left waiting is settled first (Lithic asked what became of it): the card is
  // then closed already, or its balance back on it for this closure to take.
  await pending.recoverCard(cardId, caller.userId);
  const now = clock.now();
  const operationId = newRecordId();
  let hold: ClosureHold;
  try {
    // A system closure (`system`) claims no cooldown of the cardholder's.
    hold = await money.holdClosure({ caller, cardId, operationId, now, system: options.system ?? false });
  } catch (refusal) {
    // A close that ran beside this one took the cooldown first: say what it did, once it is done.
    const closedMeanwhile =
      refusal instanceof CardServiceError &&
      refusal.code === 'WITHDRAW_COOLDOWN' &&
      (await closedOnceSettled({ db, pending }, caller, cardId));
    throw closedMeanwhile ? new CardServiceError('ALREADY_CLOSED') : refusal;
  }
  await pending.callProvider(operationId, 'close', () => provider.terminate(hold.card.provider_card_id));
  return money.settleClosure(hold);
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
