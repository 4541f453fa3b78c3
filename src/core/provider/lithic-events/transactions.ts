import type { Db } from '../../../db/schema.js';
import type { Clock } from '../../../infra/clock.js';
import type { AuthorizationOperations } from '../../authorization/engine.js';
import { AuthorizationError, type PartialRelease } from '../../authorization/types.js';
import { releasedUnder } from '../../money-store/portable/authorization-clearing.js';
import { holdIdOf } from './asa.js';
import { creditCard } from './credits.js';
import { type LithicMerchant, merchantOf } from './merchant.js';

/** A card transaction's event (Lithic's `transaction_event`): the fields read. */
export interface LithicTransactionEvent {
  token: string;
  type: string;
  result: string;
  created: string;
  amount: number;
  amounts?: { cardholder?: { amount: number; currency: string } };
}

/** Lithic's `card_transaction` (the object of `card_transaction.updated`): the fields read. */
export interface LithicCardTransaction {
  token: string;
  card_token: string;
  merchant: LithicMerchant;
  events?: LithicTransactionEvent[];
}

export interface TransactionDeps {
  db: Db;
  clock: Clock;
  core: Pick<AuthorizationOperations, 'authorize' | 'clearAuthorization' | 'voidAuthorization'>;
}

/** Why an event was applied only as far as the core allows, for the operator (`lithic_events.note`). */
export type ReviewNote = string;

/**
 * A `card_transaction.updated`: each of its events applied once, by its token, in the order they happened. Every
 * delivery carries the transaction's whole history, so a delivery that comes late (reordered) or twice finds its
 * events applied already; one that comes before another (a clearing whose authorization's delivery is still on
 * its way) applies both. Returns the notes of what the operator should look at (none when all went through).
 *
 * - AUTHORIZATION / FINANCIAL_AUTHORIZATION / AUTHORIZATION_ADVICE approved, with no hold of ours (decided by the
 *   network on our behalf: stand-in after a timeout): recorded through the engine as an advice; a FINANCIAL_AUTHORIZATION
 *   is then settled, being its own clearing. Declined: any hold of ours for it released.
 * - AUTHORIZATION_ADVICE approved on a transaction we hold: its amount is the transaction's new pending amount
 *   (Lithic: "an authorization advice changes the pending amount"): the hold lowered to it (part released), or
 *   raised by an increment decided through the engine (a decline noted for the operator).
 * - CLEARING: the hold (and any increments) settled for the amount cleared; without a hold (a force post), first
 *   recorded as an advice.
 * - AUTHORIZATION_REVERSAL: its amount released (a partial reversal releases part of the hold, the newest
 *   increment first); AUTHORIZATION_EXPIRY: the hold released.
 * - RETURN / FINANCIAL_CREDIT_AUTHORIZATION / CREDIT_AUTHORIZATION_ADVICE: a credit onto the card.
 * - RETURN_REVERSAL, CORRECTION_*: noted for review (no core operation takes money back from a card unasked).
 */
export async function applyCardTransaction(deps: TransactionDeps, transaction: LithicCardTransaction): Promise<ReviewNote[]> {
  const notes: ReviewNote[] = [];
  const events = [...(transaction.events ?? [])].sort((a, b) => a.created.localeCompare(b.created));
  for (const event of events) {
    const applied = await deps.db
      .selectFrom('lithic_transaction_events')
      .select('event_token')
      .where('event_token', '=', event.token)
      .executeTakeFirst();
    if (applied) continue;
    const note = await applyEvent(deps, transaction, event);
    if (note) notes.push(`${event.type} ${event.token}: ${note}`);
    await deps.db
      .insertInto('lithic_transaction_events')
      .values({
        event_token: event.token,
        transaction_token: transaction.token,
        type: event.type,
        applied_at: deps.clock.now().toISOString(),
      })
      .onConflict((oc) => oc.column('event_token').doNothing())
      .execute();
  }
  return notes;
}

const amountOf = (event: LithicTransactionEvent) => Math.abs(event.amounts?.cardholder?.amount ?? event.amount);

async function applyEvent(
  deps: TransactionDeps,
  transaction: LithicCardTransaction,
  event: LithicTransactionEvent,
): Promise<string | null> {
  const approved = event.result === 'APPROVED';
  switch (event.type) {
    case 'AUTHORIZATION':
      return approved ? ensureHold(deps, transaction, event) : releaseAll(deps, transaction.token);
    case 'AUTHORIZATION_ADVICE':
      return approved ? adjustHold(deps, transaction, event) : releaseAll(deps, transaction.token);
    case 'FINANCIAL_AUTHORIZATION': {
      if (!approved) return releaseAll(deps, transaction.token);
      return (await ensureHold(deps, transaction, event)) ?? settle(deps, transaction.token, amountOf(event));
    }
    case 'CLEARING':
      return (await ensureHold(deps, transaction, event)) ?? settle(deps, transaction.token, amountOf(event));
    case 'AUTHORIZATION_REVERSAL':
      return releaseSome(deps, transaction.token, amountOf(event), event.token);
    case 'AUTHORIZATION_EXPIRY':
      return releaseAll(deps, transaction.token);
    case 'RETURN':
    case 'FINANCIAL_CREDIT_AUTHORIZATION':
    case 'CREDIT_AUTHORIZATION_ADVICE':
      return approved ? credit(deps, transaction, event) : null;
    case 'RETURN_REVERSAL':
    case 'CORRECTION_CREDIT':
    case 'CORRECTION_DEBIT':
      return `not applied: ${amountOf(event)} cents, to be settled by the operator`;
    default:
      // CREDIT_AUTHORIZATION, BALANCE_INQUIRY: nothing moves.
      return null;
  }
}

async function holdsOf(db: Db, transactionToken: string) {
  return db
    .selectFrom('card_authorizations')
    .select(['id', 'provider_transaction_id', 'status', 'amount'])
    .where((eb) =>
      eb.or([
        eb('provider_transaction_id', '=', transactionToken),
        eb('provider_transaction_id', 'like', `${holdIdOf(transactionToken, '')}%`),
      ]),
    )
    .orderBy('created_at')
    .execute();
}

/** Our card with this Lithic card token, if any. */
const cardOf = (db: Db, cardToken: string) =>
  db.selectFrom('cards').select(['id', 'currency']).where('provider_card_id', '=', cardToken).executeTakeFirst();

/** The transaction's hold, recorded as an advice through the engine when we have none (the network decided). */
async function ensureHold(
  deps: TransactionDeps,
  transaction: LithicCardTransaction,
  event: LithicTransactionEvent,
): Promise<string | null> {
  const held = await holdsOf(deps.db, transaction.token);
  if (held.some((hold) => hold.status !== 'declined')) return null;
  const card = await cardOf(deps.db, transaction.card_token);
  if (!card) return 'unknown card';
  if (held.length > 0) return 'approved by the network after our decline: not held, to be settled by the operator';
  const decision = await deps.core.authorize({
    cardId: card.id,
    amount: amountOf(event),
    currency: event.amounts?.cardholder?.currency ?? card.currency,
    merchant: merchantOf(transaction.merchant),
    kind: 'purchase',
    providerTransactionId: transaction.token,
  });
  return decision.approved ? null : `approved by the network, declined by us (${decision.declineCode}): to be settled by the operator`;
}

/**
 * The clearing: every increment for what it held, the first hold for the rest (released when nothing is left).
 * With every hold released already (reversed or expired: merchants clear late), the first one is cleared late,
 * from the card's balance, or noted for the operator when that does not cover it.
 */
async function settle(deps: TransactionDeps, transactionToken: string, cleared: number): Promise<string | null> {
  const all = await holdsOf(deps.db, transactionToken);
  const holds = all.filter((hold) => hold.status === 'pending' || hold.status === 'cleared');
  const late = all.find((hold) => hold.status === 'voided' || hold.status === 'expired');
  const [first, ...increments] = holds.length > 0 || late === undefined ? holds : [late];
  if (!first) return null;
  let rest = cleared;
  const notes: string[] = [];
  for (const hold of [...increments, first]) {
    const isFirst = hold === first;
    const amount = isFirst ? rest : Math.min(rest, Number(hold.amount));
    rest -= amount;
    if (amount <= 0) {
      if (hold.status === 'pending') await release(deps, hold.provider_transaction_id);
      continue;
    }
    try {
      const result = await deps.core.clearAuthorization({ providerTransactionId: hold.provider_transaction_id, amount });
      if (result.status === 'refused') notes.push(`clearing refused (${result.reason})`);
    } catch (error) {
      if (!(error instanceof AuthorizationError && error.code === 'not_pending')) throw error;
      notes.push('cleared after its release: to be settled by the operator');
    }
  }
  return notes.length > 0 ? notes.join('; ') : null;
}

/**
 * An advice on a transaction: the hold brought to its new pending amount, lowered by releasing part of it
 * (once, by the event's token) or raised by an increment the engine decides (by the same token).
 */
async function adjustHold(
  deps: TransactionDeps,
  transaction: LithicCardTransaction,
  event: LithicTransactionEvent,
): Promise<string | null> {
  const holds = await holdsOf(deps.db, transaction.token);
  const pending = holds.filter((hold) => hold.status === 'pending');
  if (pending.length === 0) return ensureHold(deps, transaction, event);
  // What was held when the advice came: what is held now and what this advice released already (applied in
  // part before a crash, delivered again).
  const released = await releasedUnder(
    deps.db,
    holds.map((hold) => hold.id),
    event.token,
  );
  const held = pending.reduce((sum, hold) => sum + Number(hold.amount), 0) + released;
  const wanted = amountOf(event);
  if (wanted < held) return releaseSome(deps, transaction.token, held - wanted, event.token);
  if (wanted === held) return null;
  const card = await cardOf(deps.db, transaction.card_token);
  if (!card) return 'unknown card';
  const decision = await deps.core.authorize({
    cardId: card.id,
    amount: wanted - held,
    currency: event.amounts?.cardholder?.currency ?? card.currency,
    merchant: merchantOf(transaction.merchant),
    kind: 'purchase',
    providerTransactionId: holdIdOf(transaction.token, event.token),
  });
  return decision.approved
    ? null
    : `advice raised the pending amount by ${wanted - held} cents, declined by us (${decision.declineCode}): to be settled by the operator`;
}

/**
 * `amount` of the transaction's holds released, once (by `key`, the event's token): on one hold when one holds
 * enough (the newest such), else the newest first, each as far as the amount goes. Every step is a release under
 * the key, so the event delivered again after a crash in the middle releases only what is left of `amount`.
 */
async function releaseSome(deps: TransactionDeps, transactionToken: string, amount: number, key: string): Promise<null> {
  const holds = await holdsOf(deps.db, transactionToken);
  let rest =
    amount -
    (await releasedUnder(
      deps.db,
      holds.map((hold) => hold.id),
      key,
    ));
  const pending = holds.filter((hold) => hold.status === 'pending').reverse();
  const one = pending.find((hold) => Number(hold.amount) >= rest);
  for (const hold of one ? [one] : pending) {
    if (rest <= 0) break;
    const part = Math.min(rest, Number(hold.amount));
    await release(deps, hold.provider_transaction_id, { amount: part, key });
    rest -= part;
  }
  return null;
}

/** Every hold of the transaction still pending released (the first and any increments). */
async function releaseAll(deps: TransactionDeps, transactionToken: string): Promise<null> {
  for (const hold of await holdsOf(deps.db, transactionToken)) {
    if (hold.status === 'pending') await release(deps, hold.provider_transaction_id);
  }
  return null;
}

async function release(deps: TransactionDeps, providerTransactionId: string, part?: PartialRelease): Promise<string | null> {
  try {
    await deps.core.voidAuthorization(providerTransactionId, part);
  } catch (error) {
    // Nothing held (declined, never decided) or already settled: nothing to release.
    if (!(error instanceof AuthorizationError && (error.code === 'not_pending' || error.code === 'unknown_transaction'))) throw error;
  }
  return null;
}

async function credit(deps: TransactionDeps, transaction: LithicCardTransaction, event: LithicTransactionEvent): Promise<string | null> {
  const outcome = await deps.db.transaction().execute((trx) =>
    creditCard(trx, {
      eventToken: event.token,
      cardToken: transaction.card_token,
      amount: amountOf(event),
      merchantName: merchantOf(transaction.merchant).name,
      at: deps.clock.now().toISOString(),
    }),
  );
  return outcome === 'credited' ? null : `credit not taken (${outcome}): to be settled by the operator`;
}
