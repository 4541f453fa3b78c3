import { randomUUID } from 'node:crypto';
import { compiledOnce } from '../db/compiled-query.js';
import type { Executor } from '../db/schema.js';
import { findOwnedCard, isUuid, selectCards } from './card-queries.js';
import type { CoreDeps } from './deps.js';
import { CardServiceError } from './errors.js';
import { inputGuards, type TransactionsQuery } from './schemas.js';
import type { OperationHooks } from './service.js';
import {
  toCardOtp,
  toCardTransaction,
  type Caller,
  type CardTransaction,
  type CardWithBalance,
  type OtpList,
  type Page,
  type RequestedOtp,
  type Wallet,
} from './views.js';

const OTP_LIST_SIZE = 50;

/** The statement lines per user and card, kept by triggers on `card_transactions`. */
interface CardTransactionCountsTable {
  user_id: string;
  card_id: string;
  transactions: number;
}

// Compiled once (see `compiledOnce`): read on every wallet screen and balance request, and built each
// time the read takes three times as long (`bench/api.bench.ts`, wallet-balance reads).
const walletOf = compiledOnce(1, (ex, accountId: number) =>
  ex.selectFrom('accounts').select(['balance', 'updated_at']).where('id', '=', accountId).where('kind', '=', 'wallet'),
);

/** What happened on the caller's cards and wallet: statements, OTPs, the balance. */
export function createHistoryOperations({ db, mailbox, settings, clock }: CoreDeps) {
  const guard = inputGuards(settings);
  /** A card by its UUID or by its small integer number (the OTP list documents an integer id). */
  async function findOwnedCardByReference(ex: Executor, caller: Caller, reference: string): Promise<CardWithBalance> {
    if (reference.trim() === '') throw new CardServiceError('CARD_ID_REQUIRED');
    if (isUuid(reference)) return findOwnedCard(ex, caller, reference);
    if (!/^\d{1,9}$/.test(reference)) throw new CardServiceError('CARD_NOT_FOUND');
    const card = await selectCards(ex)
      .where('cards.number', '=', Number(reference))
      .where('cards.user_id', '=', caller.userId)
      .executeTakeFirst();
    if (!card) throw new CardServiceError('CARD_NOT_FOUND');
    return card;
  }

  /**
   * How many lines the caller's statement holds (one card's, or all their cards'), from the counts the
   * database keeps (migrations/20261124_02_transaction_counts.ts) rather than by visiting every line.
   */
  async function transactionCount(caller: Caller, cardId: string | undefined): Promise<number> {
    let counts = db
      .withTables<{ card_transaction_counts: CardTransactionCountsTable }>()
      .selectFrom('card_transaction_counts')
      .where('user_id', '=', caller.userId);
    if (cardId !== undefined) counts = counts.where('card_id', '=', cardId);
    const { total } = await counts
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('transactions'), eb.lit(0)).as('total'))
      .executeTakeFirstOrThrow();
    return Number(total);
  }

  return {
    /** Spec 4.12: newest first, optionally for one card. */
    async listTransactions(caller: Caller, query: TransactionsQuery): Promise<Page<CardTransaction>> {
      guard.transactionsQuery(query);
      const page = query.page ?? 1;
      const limit = query.limit ?? settings.pageSizeDefault;
      if (query.card_id !== undefined) {
        if (!isUuid(query.card_id)) throw new CardServiceError('INVALID_CARD_ID_PARAM');
        await findOwnedCard(db, caller, query.card_id);
      }
      let base = db.selectFrom('card_transactions').where('card_transactions.user_id', '=', caller.userId);
      if (query.card_id !== undefined) base = base.where('card_transactions.card_id', '=', query.card_id);
      const total = await transactionCount(caller, query.card_id);
      const lines = base
        .innerJoin('cards', 'cards.id', 'card_transactions.card_id')
        .selectAll('card_transactions')
        .select(['cards.name as card_name', 'cards.masked_pan as masked_pan']);
      // Newest first. A page in the older half is read from the oldest end and turned round, so a page
      // skips at most half the statement (in an index) and the last page costs what the first does.
      const newer = (page - 1) * limit;
      const older = total - newer - limit;
      let rows: Awaited<ReturnType<typeof lines.execute>> = [];
      if (newer < total && older >= newer) {
        rows = await lines.orderBy('card_transactions.seq', 'desc').limit(limit).offset(newer).execute();
      } else if (newer < total) {
        const oldestFirst = lines.orderBy('card_transactions.seq', 'asc').limit(Math.min(limit, total - newer));
        rows = (await oldestFirst.offset(Math.max(0, older)).execute()).reverse();
      }
      const totalPages = Math.ceil(total / limit);
      return {
        data: rows.map(toCardTransaction),
        pagination: { page, limit, total, totalPages, hasNext: page < totalPages, hasPrev: page > 1 },
      };
    },

    /** Spec 4.13: the card's OTPs, newest first. */
    async listOtps(caller: Caller, cardReference: string): Promise<OtpList> {
      const card = await findOwnedCardByReference(db, caller, cardReference);
      const rows = await db
        .selectFrom('card_otps')
        .selectAll()
        .where('card_id', '=', card.id)
        .orderBy('seq', 'desc')
        .limit(OTP_LIST_SIZE)
        .execute();
      return { otps: rows.map((row) => toCardOtp(row, card)), cardInfo: { id: card.number, nickname: card.name } };
    },

    /** Spec 4.14: takes the newest OTP e-mail for the card from the mailbox and keeps it in the card's list. */
    async requestOtp(caller: Caller, cardId: string, hooks: OperationHooks<RequestedOtp> = {}): Promise<RequestedOtp> {
      const card = await findOwnedCardByReference(db, caller, cardId);
      // Taken from the mailbox and kept in the card's list in one transaction: a failure loses no code.
      const requested = await db.transaction().execute(async (trx): Promise<RequestedOtp | null> => {
        const taken = await mailbox.takeLatest(card.provider_card_id, trx);
        if (!taken) return null;
        await trx
          .insertInto('card_otps')
          .values({
            id: randomUUID(),
            card_id: card.id,
            code: taken.code,
            amount: 0,
            currency: card.currency,
            merchant_name: '',
            source: 'email',
            created_at: clock.now().toISOString(),
          })
          .execute();
        const result: RequestedOtp = {
          message: 'OTP retrieved successfully',
          cardInfo: { id: card.id, providerCardId: card.provider_card_id, name: card.name, otpCode: taken.code },
        };
        await hooks.commit?.(trx, result);
        return result;
      });
      if (!requested) throw new CardServiceError('NO_OTP');
      return requested;
    },

    async walletBalance(caller: Caller): Promise<Wallet> {
      const [row] = (await walletOf.execute(db, caller.walletAccountId)).rows;
      if (!row) throw new CardServiceError('WALLET_NOT_FOUND');
      return { balance: Number(row.balance), updatedAt: row.updated_at };
    },
  };
}
