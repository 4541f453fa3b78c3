import { AuthorizationError, type AuthorizationDecision } from '../../authorization/types.js';
import type { DeclineCode } from '../../authorization/declines.js';
import type { Db } from '../../../db/schema.js';
import type { AuthorizationOperations } from '../../authorization/engine.js';
import { merchantOf, type LithicMerchant } from './merchant.js';

/**
 * Auth Stream Access (issue 34, section 2): Lithic asks about each authorization on a card it issued for us,
 * and our answer decides it (the money is ours: the cards are prepaid from our ledger). The request is
 * Lithic's `authorization` schema (its ASA request), the answer its `asa-response`.
 *
 * - AUTHORIZATION and FINANCIAL_AUTHORIZATION are decided by the core's engine (`core.authorize`) and held;
 *   the hold is settled by Lithic's event (a CLEARING, or the FINANCIAL_AUTHORIZATION event of a single-message
 *   purchase) and released by a reversal or expiry (`transactions.ts`).
 * - A request for a transaction already decided (Lithic's one retry after a 5XX) gets the first answer again.
 *   An incremental authorization (the same transaction token, another `event_token`) is decided as a hold of its
 *   own for its amount, settled with the transaction's clearing.
 * - CREDIT_AUTHORIZATION / FINANCIAL_CREDIT_AUTHORIZATION (a merchant's credit) is approved on any card we know
 *   that is not closed: the money arrives with its event (a RETURN, or the financial credit's event).
 * - BALANCE_INQUIRY is approved with the card's balance.
 * - Partial approval is never offered (`approved_amount` is left out, as the document asks for a full answer):
 *   a purchase over the balance is declined INSUFFICIENT_FUNDS, and its fix (a top-up) is offered in chat.
 * - Anything that fails, or a decision past its budget (1.5 s: the networks give 2 s), is declined; a late
 *   approval is then voided so its hold does not outlive the decline.
 */

/** The ASA request's fields we read (Lithic's `authorization` schema); the rest is ignored. */
export interface AsaRequest {
  token: string;
  event_token?: string;
  status: 'AUTHORIZATION' | 'CREDIT_AUTHORIZATION' | 'FINANCIAL_AUTHORIZATION' | 'FINANCIAL_CREDIT_AUTHORIZATION' | 'BALANCE_INQUIRY';
  created: string;
  amount: number;
  amounts?: { cardholder?: { amount: number; currency: string }; hold?: { amount: number; currency: string } };
  cardholder_currency?: string;
  card: { token: string };
  merchant: LithicMerchant;
}

/** Lithic's `asa-response` results (the document's enum). */
export type AsaResult =
  | 'APPROVED'
  | 'AVS_INVALID'
  | 'CARD_PAUSED'
  | 'INSUFFICIENT_FUNDS'
  | 'UNAUTHORIZED_MERCHANT'
  | 'VELOCITY_EXCEEDED'
  | 'DRIVER_NUMBER_INVALID'
  | 'VEHICLE_NUMBER_INVALID'
  | 'SUSPECTED_FRAUD'
  | 'CHALLENGE';

export interface AsaResponse {
  result: AsaResult;
  token?: string;
  balance?: { amount: number | null; available: number | null };
}

/** Each decline of the engine as Lithic's result: the document has no CARD_CLOSED, nor a result per control. */
export const ASA_RESULT_OF: Record<DeclineCode, AsaResult> = {
  card_frozen: 'CARD_PAUSED',
  card_closed: 'CARD_PAUSED',
  card_processing: 'CARD_PAUSED',
  single_use_used: 'VELOCITY_EXCEEDED',
  merchant_locked: 'UNAUTHORIZED_MERCHANT',
  per_purchase_limit: 'VELOCITY_EXCEEDED',
  daily_limit: 'VELOCITY_EXCEEDED',
  monthly_limit: 'VELOCITY_EXCEEDED',
  blocked_category: 'UNAUTHORIZED_MERCHANT',
  insufficient_funds: 'INSUFFICIENT_FUNDS',
  challenge_declined: 'SUSPECTED_FRAUD',
};

/** A card token we never issued. */
export const UNKNOWN_CARD_RESULT: AsaResult = 'SUSPECTED_FRAUD';
/** Anything that failed or came too late: a generic decline the document offers. */
export const FAILED_RESULT: AsaResult = 'UNAUTHORIZED_MERCHANT';

/** The networks give 2 s; we answer within this, whatever happens. */
export const ASA_BUDGET_MS = 1_500;

export interface AsaDeps {
  db: Db;
  core: Pick<AuthorizationOperations, 'authorize' | 'voidAuthorization'>;
  /** How long a decision may take before it is answered as declined (1.5 s by default). */
  budgetMs?: number;
  /** Told of a failure or a late decision (never with card data). */
  onFailure?: (why: 'error' | 'late', error?: unknown) => void;
}

/**
 * Whether a transaction was decided here before (its first ASA request, or an event of it): an incremental
 * authorization or Lithic's retry of it, which carries the transaction's first `created`, is not stale.
 */
export async function knownTransaction(db: Db, transactionToken: string): Promise<boolean> {
  const held = await db
    .selectFrom('card_authorizations')
    .select('id')
    .where('provider_transaction_id', '=', transactionToken)
    .executeTakeFirst();
  return held !== undefined;
}

/** The id of the hold an ASA request makes: the transaction's token, or with the event's for an increment. */
export const holdIdOf = (transactionToken: string, eventToken?: string) =>
  eventToken === undefined ? transactionToken : `${transactionToken}/${eventToken}`;

/**
 * The amount to decide on and hold, in the cardholder's currency: `amounts.cardholder`, else the (deprecated)
 * `amount`; or `amounts.hold` when it is more in the same currency (Lithic's hold adjustments: a fuel pump's or a
 * tipping merchant's anticipated final amount), so the clearing finds it held.
 */
function cardholderAmount(request: AsaRequest): { amount: number; currency: string } {
  const cardholder = request.amounts?.cardholder;
  const asked = cardholder
    ? { amount: cardholder.amount, currency: cardholder.currency }
    : { amount: request.amount, currency: request.cardholder_currency ?? 'USD' };
  const hold = request.amounts?.hold;
  return hold && hold.currency === asked.currency && hold.amount > asked.amount ? { amount: hold.amount, currency: asked.currency } : asked;
}

/**
 * Answers an ASA request: always an `asa-response`, never a throw, within the budget.
 *
 * @example
 * const answer = await decideAsa({ db, core }, request); // { result: 'APPROVED', token, balance }
 */
export async function decideAsa(deps: AsaDeps, request: AsaRequest): Promise<AsaResponse> {
  const budgetMs = deps.budgetMs ?? ASA_BUDGET_MS;
  let late = false;
  let timer: NodeJS.Timeout | undefined;
  const work = answer(deps, request, () => late);
  const overdue = new Promise<AsaResponse>((resolve) => {
    timer = setTimeout(() => {
      late = true;
      deps.onFailure?.('late');
      resolve({ result: FAILED_RESULT, token: request.token });
    }, budgetMs);
  });
  try {
    return await Promise.race([
      work.catch((error: unknown) => {
        deps.onFailure?.('error', error);
        return { result: FAILED_RESULT, token: request.token } satisfies AsaResponse;
      }),
      overdue,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function answer(deps: AsaDeps, request: AsaRequest, isLate: () => boolean): Promise<AsaResponse> {
  const card = await deps.db
    .selectFrom('cards')
    .innerJoin('accounts', 'accounts.id', 'cards.account_id')
    .select(['cards.id', 'cards.status', 'accounts.balance'])
    .where('cards.provider_card_id', '=', request.card.token)
    .executeTakeFirst();
  const token = request.token;
  if (!card) return { result: UNKNOWN_CARD_RESULT, token };
  const balance = (amount: number) => ({ amount, available: amount });
  switch (request.status) {
    case 'BALANCE_INQUIRY':
      return { result: 'APPROVED', token, balance: balance(Number(card.balance)) };
    case 'CREDIT_AUTHORIZATION':
    case 'FINANCIAL_CREDIT_AUTHORIZATION':
      return card.status === 'closed' ? { result: 'CARD_PAUSED', token } : { result: 'APPROVED', token };
    default: {
      const { amount, currency } = cardholderAmount(request);
      const providerTransactionId = await holdIdFor(deps.db, request);
      const decision = await deps.core.authorize({
        cardId: card.id,
        amount,
        currency,
        merchant: merchantOf(request.merchant),
        kind: 'purchase',
        providerTransactionId,
      });
      if (providerTransactionId === token && request.event_token !== undefined) await rememberFirstEvent(deps.db, request);
      if (isLate()) {
        await releaseLate(deps, decision);
        return { result: FAILED_RESULT, token };
      }
      return responseOf(decision, token);
    }
  }
}

/**
 * The transaction's own token for its first request (and Lithic's retry of it); the token and the event's for an
 * increment: a request whose transaction is already decided, carrying an event token the first did not.
 */
async function holdIdFor(db: Db, request: AsaRequest): Promise<string> {
  if (request.event_token === undefined) return request.token;
  const first = await db
    .selectFrom('card_authorizations')
    .select('provider_transaction_id')
    .where('provider_transaction_id', '=', request.token)
    .executeTakeFirst();
  if (!first) return request.token;
  const sameEvent = await db
    .selectFrom('lithic_transaction_events')
    .select('event_token')
    .where('event_token', '=', request.event_token)
    .where('transaction_token', '=', request.token)
    .where('type', '=', 'ASA')
    .executeTakeFirst();
  return sameEvent ? request.token : holdIdOf(request.token, request.event_token);
}

/** The first request's event token, so that Lithic's retry of it is told from an increment. */
async function rememberFirstEvent(db: Db, request: AsaRequest): Promise<void> {
  await db
    .insertInto('lithic_transaction_events')
    .values({ event_token: request.event_token!, transaction_token: request.token, type: 'ASA', applied_at: request.created })
    .onConflict((oc) => oc.column('event_token').doNothing())
    .execute();
}

async function releaseLate(deps: AsaDeps, decision: AuthorizationDecision): Promise<void> {
  if (!decision.approved) return;
  try {
    await deps.core.voidAuthorization(decision.providerTransactionId);
  } catch (error) {
    if (!(error instanceof AuthorizationError && error.code === 'not_pending')) throw error;
  }
}

function responseOf(decision: AuthorizationDecision, token: string): AsaResponse {
  const balance = { amount: decision.cardBalance, available: decision.cardBalance };
  if (decision.approved) return { result: 'APPROVED', token, balance };
  return { result: decision.declineCode ? ASA_RESULT_OF[decision.declineCode] : FAILED_RESULT, token, balance };
}
