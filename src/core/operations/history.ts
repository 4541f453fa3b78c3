import { randomUUID } from 'node:crypto';
import { compiledOnce } from '../../db/compiled-query.js';
import type { Executor } from '../../db/schema.js';
import { findOwnedCard, isUuid, selectCards } from './card-queries.js';
import type { OperationDeps } from '../deps.js';
import { isTokenHolder, tokenHolderQuery, type TokenHolder } from './authentication.js';
import { CardServiceError } from '../rules/errors.js';
import type { Cents } from '../ledger/money.js';
import { inputGuards, type TransactionsQuery } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
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

// Compiled once (see `compiledOnce`): read on every wallet screen and balance request, and built each
// time the read takes three times as long (`bench/api.bench.ts`, wallet-balance reads).
const walletOf = compiledOnce(1, (ex, accountId: number) =>
  ex.selectFrom('accounts').select(['balance', 'updated_at']).where('id', '=', accountId).where('kind', '=', 'wallet'),
);

// The wallet read of a token holder (the HTTP route, `tokenCheckedByOperation`): the token, its user and
// the wallet in one statement, where a lookup first would be two (two SQLite statements, two Postgres
// round trips). No row: the token is unknown or revoked; a row without a balance: no wallet.
const walletByTokenHash = compiledOnce(1, (ex, tokenHash: string) =>
  tokenHolderQuery(ex, tokenHash)
    .leftJoin('accounts', (join) => join.onRef('accounts.id', '=', 'users.wallet_account_id').on('accounts.kind', '=', 'wallet'))
    .select(['accounts.balance', 'accounts.updated_at']),
);

// The creation fees a user's wallet holds for cards being issued (src/core/operations/pending-operations.ts).
const heldFees = compiledOnce(1, (ex, userId: string) =>
  ex
    .selectFrom('pending_operations')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('held'))
    .where('user_id', '=', userId)
    .where('kind', '=', 'create_card'),
);

/** What happened on the caller's cards and wallet: statements, OTPs, the balance. */
export function createHistoryOperations({ db, mailbox, settings, clock, authentication }: OperationDeps) {
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
   * How many lines all the caller's cards hold, from the counts the database keeps
   * (migrations/20261124_02_transaction_counts.ts) rather than by visiting every line.
   */
  async function userLineCount(caller: Caller): Promise<number> {
    const { total } = await db
      .selectFrom('card_transaction_counts')
      .where('user_id', '=', caller.userId)
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('transactions'), eb.lit(0)).as('total'))
      .executeTakeFirstOrThrow();
    return Number(total);
  }

  /**
   * A card's line count, and whether its lines hold every position from 1 to that count: the count
   * equals the last position given (migrations/20261124_04_card_positions.ts) unless a line was deleted.
   */
  async function cardLineCount(caller: Caller, cardId: string): Promise<{ total: number; gapless: boolean }> {
    const row = await db
      .selectFrom('card_transaction_counts')
      .select(['transactions', 'last_position'])
      .where('user_id', '=', caller.userId)
      .where('card_id', '=', cardId)
      .executeTakeFirst();
    const total = Number(row?.transactions ?? 0);
    return { total, gapless: total === Number(row?.last_position ?? 0) };
  }

  return {
    /**
     * Spec 4.12: newest first, optionally for one card. A card's statement is in the order of its
     * positions, the user's in the order of the lines' sequence (the same order but for lines two
     * Postgres transactions wrote to one card at once).
     */
    async listTransactions(caller: Caller, query: TransactionsQuery): Promise<Page<CardTransaction>> {
      guard.transactionsQuery(query);
      const page = query.page ?? 1;
      const limit = query.limit ?? settings.pageSizeDefault;
      const cardId = query.card_id;
      if (cardId !== undefined) {
        if (!isUuid(cardId)) throw new CardServiceError('INVALID_CARD_ID_PARAM');
        await findOwnedCard(db, caller, cardId);
      }
      let lines = db
        .selectFrom('card_transactions')
        .innerJoin('cards', 'cards.id', 'card_transactions.card_id')
        .selectAll('card_transactions')
        .select(['cards.name as card_name', 'cards.masked_pan as masked_pan'])
        .where('card_transactions.user_id', '=', caller.userId);
      if (cardId !== undefined) lines = lines.where('card_transactions.card_id', '=', cardId);
      const { total, gapless } =
        cardId === undefined ? { total: await userLineCount(caller), gapless: false } : await cardLineCount(caller, cardId);
      // Newest first.
      const newer = (page - 1) * limit;
      const older = total - newer - limit;
      let rows: Awaited<ReturnType<typeof lines.execute>> = [];
      if (gapless && newer < total) {
        // A card's positions run from 1 to its count: the page is a range of them.
        const newest = total - newer;
        rows = await lines
          .where((eb) => eb.between('card_transactions.card_position', Math.max(1, newest - limit + 1), newest))
          .orderBy('card_transactions.card_position', 'desc')
          .execute();
      } else if (newer < total) {
        // The user's statement, or a card's with a gap (a deleted line): the page skips the lines before it
        // in an index, from whichever end is nearer (read from the oldest end and turned round).
        const order = cardId === undefined ? 'card_transactions.seq' : 'card_transactions.card_position';
        if (older >= newer) {
          rows = await lines.orderBy(order, 'desc').limit(limit).offset(newer).execute();
        } else {
          const oldestFirst = lines.orderBy(order, 'asc').limit(Math.min(limit, total - newer));
          rows = (await oldestFirst.offset(Math.max(0, older)).execute()).reverse();
        }
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

    /**
     * An extension: the creation fees held from the caller's wallet for cards still being issued
     * (`processing`), already out of its balance; taken once the card is issued, given back if it is not.
     * Not in the spec's wallet: there, the processing cards explain it.
     */
    async walletHeld(caller: Caller): Promise<Cents> {
      const [fees] = (await heldFees.execute(db, caller.userId)).rows;
      return Number(fees?.held ?? 0);
    },

    /** The caller's wallet; for a token holder, read with its token in one statement (see `walletByTokenHash`). */
    async walletBalance(who: Caller | TokenHolder): Promise<Wallet> {
      let row: { balance: number | null; updated_at: string | null } | undefined;
      if (isTokenHolder(who)) {
        const [found] = (await walletByTokenHash.execute(db, who.tokenHash)).rows;
        await authentication.holderFound(who, found);
        row = found;
      } else {
        [row] = (await walletOf.execute(db, who.walletAccountId)).rows;
      }
      if (row?.balance == null || row.updated_at === null) throw new CardServiceError('WALLET_NOT_FOUND');
      return { balance: Number(row.balance), updatedAt: row.updated_at };
    },
  };
}
