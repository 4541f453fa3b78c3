import { sql } from 'kysely';
import { compiledOnce } from '../../../db/compiled-query.js';
import type { Cents } from '../../ledger/money.js';
import { heldRecords, holdOutcome, type HoldRow, journalEntries, lockedCard, staleOperations } from './withdraw-statements.js';

// A closure's two transactions (before and after the provider call, `close` in `operations/card-closure.ts`;
// in steps, `../portable/closure.ts`), each as
// one Postgres statement, as a withdrawal's are (`withdraw-statements.ts`, whose hold this one shares but
// for its rules). The rules decide inside the database by conditional updates, each mirroring a named check
// of `src/core/rules/rules.ts`; the caller words a refusal with those same checks, from the figures returned.

/**
 * The hold: steps of `close`'s first transaction, as data-modifying CTEs.
 * - `stale` (`staleOperations`), then `card` (`lockedCard`).
 * - `claimed`: the attempt is recorded only when the card is neither closed nor unissued
 *   (`closeStateRefusal`) and the cooldown shared with withdrawals has passed (`withdrawCooldownRefusal`):
 *   those refusals come first and record nothing.
 * - `debit`: the card's whole balance off its account, once claimed, when it has any; then what
 *   `heldRecords` writes (`hold` in `pending-operations.ts`). The account is set to zero, which is what
 *   `balance - available` gives on its locked row: see `settleClosure` for why not that expression.
 * - `recorded`: a card with nothing on it holds nothing, the operation alone is recorded (`record`).
 */
export const holdClosure = compiledOnce(
  8,
  (
    ex,
    cardId: string,
    userId: string,
    at: string,
    threshold: string,
    staleBefore: string,
    operationId: string,
    inFlightAccountId: number,
    reference: string,
  ) => ({
    compile: () =>
      sql<HoldRow>`
        with ${staleOperations(userId, staleBefore)},
        ${lockedCard(cardId, userId, threshold)},
        claimed as (
          update cards set last_withdraw_attempt_at = ${at}
          from card
          where cards.id = card.id
            and card.status <> 'closed' and card.provider_ready <> 0
            and card.cooled
          returning cards.id
        ),
        debit as (
          update accounts set balance = 0, updated_at = ${at}
          from card join claimed on claimed.id = card.id
          where accounts.id = card.account_id and accounts.kind <> 'system' and card.available > 0
          returning accounts.id
        ),
        ${heldRecords({ kind: 'close', lineType: 'card_close', amount: sql`card.available`, operationId, userId, inFlightAccountId, reference, at })},
        recorded as (
          insert into pending_operations (id, kind, user_id, card_id, account_id, amount, hold_journal_id, coupon_id, created_at)
          select ${operationId}, 'close', ${userId}, card.id, null, 0, null, null, ${at}
          from card join claimed on claimed.id = card.id
          where card.available = 0
        )
        ${holdOutcome}
      `.compile(ex),
  }),
);

/** What the settling statement did. */
export interface ClosureSettled {
  /**
   * False when nothing was done: the operation was no longer pending (the recovery took it) or the card was
   * closed meanwhile; the caller's path in steps says which (`close`).
   */
  taken: boolean;
  /** What the card gave the wallet: what was held and what reached it since (a refund). */
  balance: Cents;
  invoiceId: number | null;
  transactionId: string | null;
  walletBalance: Cents;
}

interface SettleRow {
  taken: boolean;
  balance: number | null;
  invoice_id: number | null;
  transaction_id: string | null;
  wallet_balance: number;
}

/**
 * The settling: `close`'s second transaction, as data-modifying CTEs.
 * - `card`: the card's row locked before its account's (a purchase or refund beside this one decides
 *   first or waits), with what reached it since the hold (`rest`).
 * - `op`: whoever deletes the pending row settles the operation (`take`), only while the card is not
 *   closed (`closeStateRefusal`: a card closed meanwhile is left to the path in steps, which releases).
 * - `wallet`: what was held and the rest onto the wallet in one update (a statement may not change one
 *   row twice); `emptied`: the rest off the card's account, leaving it at zero (its row locked by `card`).
 *   Set to zero, neither guarded by nor computed from its balance: when a refund committed while `card`
 *   waited for the lock, the update first meets the row as the statement's snapshot saw it, before the
 *   refund. A condition failing on that version skips the row (it is never re-read), and Postgres checks
 *   constraints on a new row computed from it before re-reading (`balance - rest` would break the
 *   no-negative check on a refunded card).
 * - `held_journal` and `rest_journal` with their entries (`moveHeld` and the rest's `postJournal`), the
 *   `Pending` line turned `Approved` for the whole balance (`settleLine`) or, when nothing was held, a new
 *   line for the rest; the card `closed`.
 */
export const settleClosure = compiledOnce(
  9,
  (
    ex,
    operationId: string,
    cardId: string,
    userId: string,
    walletAccountId: number,
    inFlightAccountId: number,
    at: string,
    reference: string,
    restReference: string,
    lineId: string,
  ) => ({
    compile: () =>
      sql<SettleRow>`
        with card as (
          select cards.id, cards.account_id, cards.currency, cards.status, accounts.balance as rest
          from cards join accounts on accounts.id = cards.account_id
          where cards.id = ${cardId} and cards.user_id = ${userId}
          for update of cards, accounts
        ),
        op as (
          delete from pending_operations
          where id = ${operationId} and exists (select 1 from card where card.status <> 'closed')
          returning amount as held
        ),
        wallet as (
          update accounts set balance = accounts.balance + op.held + card.rest, updated_at = ${at}
          from op cross join card
          where accounts.id = ${walletAccountId}::integer and accounts.kind <> 'system' and op.held + card.rest > 0
          returning accounts.balance
        ),
        emptied as (
          update accounts set balance = 0, updated_at = ${at}
          from op cross join card
          where accounts.id = card.account_id and accounts.kind <> 'system' and card.rest > 0
          returning accounts.id
        ),
        held_journal as (
          insert into journals (reference, kind, created_at)
          select ${reference}, 'card_close', ${at} from op cross join wallet where op.held > 0
          returning id
        ),
        rest_journal as (
          insert into journals (reference, kind, created_at)
          select case when op.held > 0 then ${restReference} else ${reference} end, 'card_close', ${at} from op cross join emptied
          returning id
        ),
        entries as (
          insert into entries (journal_id, account_id, amount)
          ${journalEntries('held_journal', 'op', [
            [sql`${walletAccountId}::integer`, sql`op.held`],
            [sql`${inFlightAccountId}::integer`, sql`-op.held`],
          ])}
          union all
          ${journalEntries('rest_journal', 'card', [
            [sql`card.account_id`, sql`-card.rest`],
            [sql`${walletAccountId}::integer`, sql`card.rest`],
          ])}
        ),
        settled_line as (
          update card_transactions set status = 'Approved', journal_id = held_journal.id, amount = op.held + card.rest,
            original_amount = op.held + card.rest, updated_at = ${at}
          from held_journal cross join op cross join card
          where card_transactions.id = ${operationId} and card_transactions.status = 'Pending'
          returning card_transactions.id
        ),
        new_line as (
          insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
            original_amount, original_currency, decline_code, created_at, updated_at, card_position)
          select ${lineId}, card.id, ${userId}, rest_journal.id, 'Approved', 'Debit', card.rest, card.currency, 'card_close',
            'Wallet', card.rest, card.currency, null, ${at}, ${at}, 0
          from rest_journal cross join card cross join op
          where op.held = 0
          returning id
        ),
        closed as (
          update cards set status = 'closed', updated_at = ${at} from op where cards.id = ${cardId} returning cards.id
        )
        select exists (select 1 from op) as taken, op.held + card.rest as balance,
          coalesce(held_journal.id, rest_journal.id) as invoice_id, coalesce(settled_line.id, new_line.id) as transaction_id,
          coalesce(wallet.balance, (select balance from accounts where id = ${walletAccountId}::integer)) as wallet_balance
        from (select 1) as one
          left join op on true left join card on true left join wallet on true
          left join held_journal on true left join rest_journal on true left join settled_line on true left join new_line on true
      `.compile(ex),
  }),
);

/** Reads `settleClosure`'s one row. */
export function toClosureSettled(row: SettleRow): ClosureSettled {
  return {
    taken: row.taken,
    balance: Number(row.balance ?? 0),
    invoiceId: row.invoice_id,
    transactionId: row.transaction_id,
    walletBalance: Number(row.wallet_balance),
  };
}
