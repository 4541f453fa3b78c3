import { isoTime } from '../../infra/clock.js';
import type { OperationDeps } from '../deps.js';
import { close } from '../operations/card-closure.js';
import { CardServiceError } from '../rules/errors.js';
import {
  type AuthorizationDecision,
  AuthorizationError,
  type AuthorizationInput,
  type ClearingInput,
  type ClearingResult,
  type PartialRelease,
  type ReleaseResult,
} from './types.js';

/**
 * The authorization engine (issue 33): every purchase decided by the core, as a card issuer's processor
 * asks it. `authorize` decides in one transaction and holds what it approves; `clearAuthorization` settles
 * a hold (idempotent, like `authorize`, by the provider's transaction id); `voidAuthorization` and the
 * expiry (`AUTHORIZATION_HOLD_DAYS`, swept by the housekeeping) release one. The rules are
 * `decision.ts`; the money moves in the money store (`money-store/port.ts`).
 *
 * @example
 * const decision = await core.authorize({ cardId, amount: 4_210, currency: 'USD', kind: 'purchase',
 *   merchant: { name: 'STEAM', mcc: '5816', country: 'US' }, providerTransactionId: 'txn_1' });
 * if (decision.approved) await core.clearAuthorization({ providerTransactionId: 'txn_1' });
 */
export function createAuthorizationOperations(deps: OperationDeps) {
  return {
    authorize: (input: AuthorizationInput) => authorize(deps, input),
    clearAuthorization: (input: ClearingInput) => clearAuthorization(deps, input),
    /** Releases the hold, or part of it (`part`: a partial reversal, once by its key). */
    voidAuthorization: (providerTransactionId: string, part?: PartialRelease) =>
      deps.money.releaseAuthorization({
        providerTransactionId: transactionId(providerTransactionId),
        why: 'voided',
        ...(part ? { part: { amount: positiveCents(part.amount), key: transactionId(part.key) } } : {}),
        now: deps.clock.now(),
      }),
    expireAuthorizations: () => expireAuthorizations(deps),
    closeSpentSingleUseCards: () => closeSpentSingleUseCards(deps),
  };
}

export type AuthorizationOperations = ReturnType<typeof createAuthorizationOperations>;

/** What a clearing did, and whether it closed the single-use card it cleared on. */
export interface ClearingOutcome extends ClearingResult {
  cardClosed: boolean;
}

const MERCHANT_NAME_MAX = 100;

function transactionId(value: string): string {
  if (value.trim() === '' || value.length > 200) throw new AuthorizationError('invalid_request', 'A provider transaction id is required');
  return value;
}

function positiveCents(amount: number): number {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new AuthorizationError('invalid_request', 'The amount must be positive whole cents');
  return amount;
}

async function authorize(deps: OperationDeps, input: AuthorizationInput): Promise<AuthorizationDecision> {
  const { name, mcc, country } = input.merchant;
  if (name.trim() === '' || name.length > MERCHANT_NAME_MAX) throw new AuthorizationError('invalid_request', 'A merchant name is required');
  if (!/^\d{4}$/.test(mcc)) throw new AuthorizationError('invalid_request', 'The MCC is four digits');
  if (!/^[A-Z]{2}$/.test(country)) throw new AuthorizationError('invalid_request', 'The country is two capital letters (ISO 3166)');
  return deps.money.holdAuthorization({
    ...input,
    amount: positiveCents(input.amount),
    providerTransactionId: transactionId(input.providerTransactionId),
    merchant: { name: name.trim(), mcc, country },
    announcePending: input.announcePending ?? true,
    now: deps.clock.now(),
  });
}

/**
 * The clearing, then a single-use card's closure (its balance back to the wallet, the provider's card
 * terminated), as the system's, which claims no cooldown of the cardholder's. A closure that fails (the
 * provider) leaves the card open but spent: any further purchase is declined `single_use_used`, and the
 * housekeeping's expiry sweep (`closeSpentSingleUseCards`) tries it again.
 */
async function clearAuthorization(deps: OperationDeps, input: ClearingInput): Promise<ClearingOutcome> {
  const result = await deps.money.clearAuthorization({
    providerTransactionId: transactionId(input.providerTransactionId),
    amount: input.amount === undefined ? null : positiveCents(input.amount),
    announce: input.announce ?? true,
    now: deps.clock.now(),
  });
  if (!result.closesCard || result.status !== 'cleared') return { ...result, cardClosed: false };
  const card = await deps.db
    .selectFrom('cards')
    .innerJoin('users', 'users.id', 'cards.user_id')
    .select(['cards.status', 'cards.user_id', 'users.wallet_account_id'])
    .where('cards.id', '=', result.cardId)
    .executeTakeFirstOrThrow();
  if (card.status === 'closed') return { ...result, cardClosed: true };
  const closed = await closeSpent(deps, { cardId: result.cardId, userId: card.user_id, walletAccountId: card.wallet_account_id });
  return closed ? { ...result, cardBalance: 0, cardClosed: true } : { ...result, cardClosed: false };
}

/** A spent single-use card closed as the system; false when it could not be (left for the next sweep). */
async function closeSpent(deps: OperationDeps, card: { cardId: string; userId: string; walletAccountId: number }): Promise<boolean> {
  try {
    await close(deps, { userId: card.userId, walletAccountId: card.walletAccountId }, card.cardId, { system: true });
    return true;
  } catch (error) {
    if (error instanceof CardServiceError && error.code === 'ALREADY_CLOSED') return true;
    return false;
  }
}

/**
 * Single-use cards still active after a cleared purchase (their closure failed at the clearing), closed
 * now; returns how many were closed and how many failed again (retried on the next sweep).
 */
async function closeSpentSingleUseCards(deps: OperationDeps): Promise<{ closed: number; failed: number }> {
  const spent = await deps.db
    .selectFrom('cards')
    .innerJoin('users', 'users.id', 'cards.user_id')
    .select(['cards.id as cardId', 'cards.user_id as userId', 'users.wallet_account_id as walletAccountId'])
    .where('cards.type', '=', 'single_use')
    .where('cards.status', '=', 'active')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('card_authorizations')
          .select('card_authorizations.id')
          .whereRef('card_authorizations.card_id', '=', 'cards.id')
          .where('card_authorizations.status', '=', 'cleared'),
      ),
    )
    .limit(EXPIRY_BATCH)
    .execute();
  let closed = 0;
  for (const card of spent) if (await closeSpent(deps, card)) closed++;
  return { closed, failed: spent.length - closed };
}

const EXPIRY_BATCH = 100;

/** Releases every hold past `AUTHORIZATION_HOLD_DAYS` (the line `Reversed`); returns how many. */
async function expireAuthorizations(deps: OperationDeps): Promise<ReleaseResult[]> {
  const now = deps.clock.now();
  const released: ReleaseResult[] = [];
  for (;;) {
    const due = await deps.db
      .selectFrom('card_authorizations')
      .select('provider_transaction_id')
      .where('status', '=', 'pending')
      .where('expires_at', '<=', isoTime(now))
      .orderBy('expires_at')
      .limit(EXPIRY_BATCH)
      .execute();
    for (const { provider_transaction_id: providerTransactionId } of due) {
      try {
        const release = await deps.money.releaseAuthorization({ providerTransactionId, why: 'expired', now });
        if (!release.replayed) released.push(release);
      } catch (error) {
        // Cleared or voided since it was listed.
        if (!(error instanceof AuthorizationError && error.code === 'not_pending')) throw error;
      }
    }
    if (due.length < EXPIRY_BATCH) return released;
  }
}
