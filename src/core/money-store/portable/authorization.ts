import { compiledOnce } from '../../../db/compiled-query.js';
import type { CardAuthorizationsTable, Executor } from '../../../db/schema.js';
import { isoTime } from '../../../infra/clock.js';
import { autoTopupOf, controlsOf, spendingOf } from '../../authorization/controls.js';
import { type Decline, declineBeforeFunds, fundsDecline, needsSpending } from '../../authorization/decision.js';
import {
  type AuthorizationDecision,
  AuthorizationError,
  type AuthorizationRequest,
  type AutoTopupOutcome,
} from '../../authorization/types.js';
import { newRecordId } from '../../ids.js';
import { postJournal, SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import { accountBalance, lockedBalance } from '../../operations/card-queries.js';
import { recordCardTransaction } from '../../operations/card-records.js';
import { type CardTransactionEvent, recordEvent } from '../../operations/events.js';
import type { MoneyStoreDeps } from '../port.js';
import { autoTopUp } from './authorization-topup.js';

// An authorization's hold (`authorization/engine.ts`), a statement per step; its clearing and release are
// `authorization-clearing.ts`. Each is one transaction that locks the card's row first, so the decisions on
// one card queue on it (Postgres) or on the one writer (SQLite), and one asked twice at once is decided once.

const CARD_COLUMNS = [
  'id',
  'user_id',
  'account_id',
  'status',
  'type',
  'locked_merchant',
  'per_purchase_limit',
  'daily_limit',
  'monthly_limit',
  'blocked_categories',
  'auto_topup_enabled',
  'auto_topup_min_balance',
  'auto_topup_amount',
  'auto_topup_last_triggered',
  'category',
  'deposit',
  'limit_amount',
  'currency',
  'name',
  'masked_pan',
] as const;

// Compiled once: every decision runs these (`bench/authorize.bench.ts`).
export const lockCard = compiledOnce(1, (ex, cardId: string) =>
  ex
    .updateTable('cards')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', cardId)
    .returning(CARD_COLUMNS),
);
export type LockedCard = Awaited<ReturnType<typeof lockCard.executeTakeOne>>;

export const byProviderId = compiledOnce(1, (ex, providerTransactionId: string) =>
  ex.selectFrom('card_authorizations').selectAll().where('provider_transaction_id', '=', providerTransactionId),
);

const usedOnce = compiledOnce(1, (ex, cardId: string) =>
  ex.selectFrom('card_authorizations').select('id').where('card_id', '=', cardId).where('status', 'in', ['pending', 'cleared']).limit(1),
);

type AuthorizationValues = [
  id: string,
  providerTransactionId: string,
  cardId: string,
  userId: string,
  status: 'pending' | 'declined',
  amount: number,
  currency: string,
  merchantName: string,
  mcc: string,
  country: string,
  declineCode: string | null,
  expiresAt: string,
  at: string,
];

/** The authorization's row; none returned when another decided the same provider transaction first. */
const insertAuthorization = compiledOnce(13, (ex, ...v: AuthorizationValues) =>
  ex
    .insertInto('card_authorizations')
    .values({
      id: v[0],
      provider_transaction_id: v[1],
      card_id: v[2],
      user_id: v[3],
      status: v[4],
      amount: v[5],
      cleared_amount: null,
      currency: v[6],
      merchant_name: v[7],
      merchant_mcc: v[8],
      merchant_country: v[9],
      decline_code: v[10],
      expires_at: v[11],
      created_at: v[12],
      updated_at: v[12],
    })
    .onConflict((oc) => oc.column('provider_transaction_id').doNothing())
    .returning('id'),
);

/** Thrown inside the transaction when another decided the same provider transaction first: rolled back, then answered as that one. */
class DecidedMeanwhile extends Error {}

/** `MoneyStore.holdAuthorization`. */
export async function holdAuthorization(deps: MoneyStoreDeps, request: AuthorizationRequest): Promise<AuthorizationDecision> {
  try {
    return await deps.db.transaction().execute((trx) => decide(deps, trx, request));
  } catch (error) {
    if (!(error instanceof DecidedMeanwhile)) throw error;
    return deps.db.transaction().execute((trx) => decide(deps, trx, request));
  }
}

async function decide(deps: MoneyStoreDeps, trx: Executor, request: AuthorizationRequest): Promise<AuthorizationDecision> {
  const { cardId, amount, merchant, now } = request;
  const [earlier] = (await byProviderId.execute(trx, request.providerTransactionId)).rows;
  if (earlier) return replayed(trx, earlier);
  const [card] = (await lockCard.execute(trx, cardId)).rows;
  if (!card) throw new AuthorizationError('unknown_card', `No card ${cardId}`);
  if (card.currency !== request.currency) {
    throw new AuthorizationError('invalid_request', `The card's currency is ${card.currency}, not ${request.currency}`);
  }
  const controls = controlsOf(card);
  const usage = {
    alreadyUsed: card.type === 'single_use' && (await usedOnce.execute(trx, card.id)).rows.length > 0,
    spending: needsSpending(controls) ? await spendingOf(trx, card.id, now) : null,
  };
  let decline: Decline | null = declineBeforeFunds(
    { status: card.status, type: card.type, lockedMerchant: card.locked_merchant, controls },
    { amount, merchant },
    usage,
  );
  let available: Cents | null = null;
  let autoTopup: AutoTopupOutcome | null = null;
  if (!decline) {
    // Read once the card is locked, in a statement of its own: on Postgres a statement that waited for the
    // lock still reads what was committed before it began.
    available = await lockedBalance(trx, card.account_id);
    const auto = autoTopupOf(card);
    if (amount > available && auto.enabled) {
      const topup = Math.max(auto.topupAmount, amount - available, deps.settings.topupMin);
      autoTopup = await autoTopUp(trx, deps, card, topup, now, 'insufficient_funds');
      if (autoTopup?.outcome === 'done') available += autoTopup.amount;
    }
    decline = fundsDecline(amount, available, deps.settings.topupMin);
  }
  const id = newRecordId();
  const at = isoTime(now);
  let cardBalance: Cents;
  let journalId: number | null = null;
  if (decline) cardBalance = available ?? (await accountBalance(trx, card.account_id));
  else {
    const held = await postJournal(trx, {
      reference: `authorize:${id}`,
      kind: 'authorization_hold',
      at,
      postings: [
        { accountId: card.account_id, amount: -amount },
        { accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.authorized), amount, system: true },
      ],
    });
    if (!held) throw new Error('Card balance changed during authorization');
    journalId = held.journalId;
    cardBalance = held.balances.get(card.account_id) ?? 0;
    if (card.type === 'merchant_locked' && card.locked_merchant === null) {
      await trx.updateTable('cards').set({ locked_merchant: merchant.name, updated_at: at }).where('id', '=', card.id).execute();
    }
  }
  const [inserted] = (
    await insertAuthorization.execute(
      trx,
      id,
      request.providerTransactionId,
      card.id,
      card.user_id,
      decline ? 'declined' : 'pending',
      amount,
      card.currency,
      merchant.name,
      merchant.mcc,
      merchant.country,
      decline?.code ?? null,
      isoTime(now.getTime() + deps.settings.authorizationHoldDays * 86_400_000),
      at,
    )
  ).rows;
  if (!inserted) throw new DecidedMeanwhile();
  const line = {
    status: decline ? 'Declined' : 'Pending',
    side: 'Debit',
    type: request.kind,
    amount,
    currency: card.currency,
    merchantName: merchant.name,
    declineCode: decline?.code ?? null,
  } as const;
  await recordCardTransaction(trx, { id, cardId: card.id, userId: card.user_id, journalId, ...line, at });
  if (decline || request.announcePending) {
    await announce(trx, card, { transactionId: id, ...line, cardBalance, createdAt: at, ...(decline ? { fix: decline.fix } : {}) });
  }
  return {
    authorizationId: id,
    providerTransactionId: request.providerTransactionId,
    cardId: card.id,
    approved: !decline,
    declineCode: decline?.code ?? null,
    fix: decline?.fix ?? null,
    amount,
    cardBalance,
    autoTopup,
    replayed: false,
  };
}

export type AuthorizationRow = { [K in keyof CardAuthorizationsTable]: CardAuthorizationsTable[K] };

async function replayed(ex: Executor, row: AuthorizationRow): Promise<AuthorizationDecision> {
  const card = await ex.selectFrom('cards').select('account_id').where('id', '=', row.card_id).executeTakeFirstOrThrow();
  return {
    authorizationId: row.id,
    providerTransactionId: row.provider_transaction_id,
    cardId: row.card_id,
    approved: row.status !== 'declined',
    declineCode: (row.decline_code as AuthorizationDecision['declineCode']) ?? null,
    fix: null,
    amount: Number(row.amount),
    cardBalance: await accountBalance(ex, card.account_id),
    autoTopup: null,
    replayed: true,
  };
}

type Announced = Omit<CardTransactionEvent, 'kind' | 'cardId' | 'cardName' | 'maskedPan'>;

/** The chat's push of a statement line, in the same transaction (the outbox). */
export async function announce(trx: Executor, card: LockedCard, line: Announced): Promise<void> {
  const event: CardTransactionEvent = {
    kind: 'card_transaction',
    cardId: card.id,
    cardName: card.name,
    maskedPan: card.masked_pan,
    ...line,
  };
  await recordEvent(trx, card.user_id, event, line.createdAt);
}
