import { sql } from 'kysely';
import { compiledOnce } from '../../db/compiled-query.js';
import type { CardRow, Executor } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';

/** What one top-up statement did, and what the named checks need to word a refusal. */
export interface TopupOutcome {
  /** The card as it was found, its row locked; undefined when the caller has no such card. */
  card?: Pick<CardRow, 'status' | 'category' | 'currency' | 'last_topup_attempt_at'> & {
    deposit: Cents;
    limit: Cents;
    cooled: boolean;
    fee: Cents;
  };
  /** Set once the money moved: the journal and the balances after it. */
  moved?: { journalId: number; walletBalance: Cents; cardBalance: Cents };
  /** The wallet's balance as the statement found it (for a refusal's figures). */
  walletAvailable: Cents;
}

interface Row {
  status: CardRow['status'] | null;
  category: CardRow['category'] | null;
  currency: string | null;
  last_topup_attempt_at: string | null;
  deposit: number | null;
  limit_amount: number | null;
  cooled: boolean | null;
  fee: number | null;
  journal_id: number | null;
  wallet_balance: number | null;
  card_balance: number | null;
  wallet_available: number | null;
}

/**
 * A whole top-up in one Postgres statement, so one round trip, committed on its own when run outside a
 * transaction: data-modifying CTEs in the order `topup` in `movements.ts` takes its steps. The rules decide
 * inside the database by conditional updates, each mirroring a named check of `src/core/rules/rules.ts`;
 * the caller words a refusal with those same checks, from the figures returned.
 * - `card`: the caller's card, its row locked (a concurrent attempt waits, then sees this one's claim).
 * - `wallet`: the debit, only when the cooldown has passed (`topupCooldownRefusal`), the card takes
 *   top-ups (`topupStateRefusal`), the deposit stays within the plan (`withinPlanLimit`) and the wallet
 *   covers amount and fee (`walletCovers`; re-checked on the row's latest version if another commit moved it).
 * - `claimed`: the attempt is recorded whenever the cooldown had passed, refused later or not (spec 4.6:
 *   an attempt counts), with the deposit when the money moved. One update of the card row: a statement
 *   may not change one row twice.
 * - the card's account, the journal, its entries (the revenue's entry alone: system accounts keep no
 *   balance row, see `Posting.system`) and the statement line, only when the money moved.
 * - `counted`: the line's position, from the upsert of its card's counts row that the position trigger
 *   would make (migrations/20261124_04_card_positions.ts), under the same row lock; the line is marked
 *   `position_given`, so the trigger leaves it be (migrations/20261127_01_positions_given.ts).
 * The fee is `platformFeeFor`'s: percent half-up, plus the fixed part.
 */
export const topupInOneStatement = compiledOnce(
  9,
  (
    ex,
    cardId: string,
    userId: string,
    amount: Cents,
    at: string,
    threshold: string,
    walletAccountId: number,
    revenueAccountId: number,
    transactionId: string,
    reference: string,
  ) => ({
    compile: () =>
      sql<Row>`
        with card as (
          select id, account_id, status, category, deposit, limit_amount, currency, last_topup_attempt_at,
            (last_topup_attempt_at is null or last_topup_attempt_at <= ${threshold}) as cooled
          from cards where id = ${cardId} and user_id = ${userId}
          for update
        ),
        priced as (
          select card.id, card.account_id, card.status, card.category, card.deposit, card.limit_amount, card.currency,
            card.last_topup_attempt_at, card.cooled, coalesce(
            (select (${amount}::bigint * f.percent_bps + 5000) / 10000 + f.fixed_amount from platform_fees f where f.category = card.category),
            0
          )::bigint as fee
          from card
        ),
        wallet as (
          update accounts set balance = accounts.balance - (${amount}::bigint + priced.fee), updated_at = ${at}
          from priced
          where accounts.id = ${walletAccountId}::integer and accounts.kind <> 'system'
            and priced.cooled
            and priced.status not in ('closed', 'processing')
            and priced.deposit + ${amount}::bigint <= priced.limit_amount
            and accounts.balance - (${amount}::bigint + priced.fee) >= 0
          returning accounts.balance, priced.fee, priced.account_id as card_account_id
        ),
        card_account as (
          update accounts set balance = accounts.balance + ${amount}::bigint, updated_at = ${at}
          from wallet where accounts.id = wallet.card_account_id and accounts.kind <> 'system'
          returning accounts.balance
        ),
        claimed as (
          update cards set last_topup_attempt_at = ${at},
            deposit = cards.deposit + coalesce((select ${amount}::bigint from wallet), 0),
            updated_at = coalesce((select ${at}::text from wallet), cards.updated_at)
          from card where cards.id = card.id and card.cooled
          returning cards.id
        ),
        journal as (
          insert into journals (reference, kind, created_at) select ${reference}, 'topup', ${at} from wallet returning id
        ),
        entries as (
          insert into entries (journal_id, account_id, amount)
          select journal.id, posting.account_id, posting.amount
          from journal cross join wallet cross join lateral (values
            (${walletAccountId}::integer, -(${amount}::bigint + wallet.fee)),
            (wallet.card_account_id, ${amount}::bigint),
            (${revenueAccountId}::integer, wallet.fee)
          ) as posting (account_id, amount)
          where posting.amount <> 0
        ),
        counted as (
          insert into card_transaction_counts as counts (user_id, card_id, transactions, last_position)
          select ${userId}, card.id, 1, 1 from journal cross join card
          on conflict (user_id, card_id) do update
          set transactions = counts.transactions + 1, last_position = counts.last_position + 1
          returning counts.last_position
        ),
        line as (
          insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
            original_amount, original_currency, decline_code, created_at, updated_at, card_position, position_given)
          select ${transactionId}, card.id, ${userId}, journal.id, 'Approved', 'Credit', ${amount}::bigint, card.currency, 'topup',
            'Wallet top-up', ${amount}::bigint, card.currency, null, ${at}, ${at}, counted.last_position, true
          from journal cross join card cross join counted
        )
        select priced.status, priced.category, priced.currency, priced.last_topup_attempt_at, priced.deposit, priced.limit_amount,
          priced.cooled, priced.fee, journal.id as journal_id, wallet.balance as wallet_balance, card_account.balance as card_balance,
          (select balance from accounts where id = ${walletAccountId}::integer) as wallet_available
        from (select 1) as one
          left join priced on true left join wallet on true left join card_account on true left join journal on true
      `.compile(ex),
  }),
);

/** Runs `topupInOneStatement` and reads its one row. */
export async function topupOnce(
  ex: Executor,
  args: Parameters<typeof topupInOneStatement.execute> extends [Executor, ...infer A] ? A : never,
): Promise<TopupOutcome> {
  const row = await topupInOneStatement.executeTakeOne(ex, ...args);
  const outcome: TopupOutcome = { walletAvailable: Number(row.wallet_available ?? 0) };
  if (row.status !== null) {
    outcome.card = {
      status: row.status,
      category: row.category!,
      currency: row.currency!,
      last_topup_attempt_at: row.last_topup_attempt_at,
      deposit: Number(row.deposit),
      limit: Number(row.limit_amount),
      cooled: Boolean(row.cooled),
      fee: Number(row.fee),
    };
  }
  if (row.journal_id !== null) {
    outcome.moved = { journalId: row.journal_id, walletBalance: Number(row.wallet_balance), cardBalance: Number(row.card_balance) };
  }
  return outcome;
}
