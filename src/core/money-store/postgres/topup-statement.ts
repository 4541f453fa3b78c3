import { type RawBuilder, sql } from 'kysely';
import { compiledOnce } from '../../../db/compiled-query.js';
import type { CardRow, Executor } from '../../../db/schema.js';
import type { Cents } from '../../ledger/money.js';
import { isTokenHolder, type TokenHolder, type TokenUse } from '../../operations/authentication.js';
import type { Caller } from '../../operations/views.js';

/** What one top-up statement did, and what the named checks need to word a refusal. */
export interface TopupOutcome {
  /** Whose top-up it was; undefined when a token's holder was looked for and not found (nothing happened). */
  caller?: Caller;
  /** The token's row as the statement found it, when it looked a token up (for `Authentication.noteUse`). */
  tokenUse?: TokenUse;
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
  user_id: string | null;
  wallet_account_id: number | null;
  token_id: string | null;
  last_used_at: string | null;
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

/** The figures of a top-up statement that do not name its caller. */
type TopupArgs = [
  cardId: string,
  amount: Cents,
  at: string,
  threshold: string,
  revenueAccountId: number,
  transactionId: string,
  reference: string,
];

/**
 * A whole top-up in one Postgres statement, so one round trip, committed on its own when run outside a
 * transaction: data-modifying CTEs in the order `topUp` in `../portable/movements.ts` takes its steps. The rules decide
 * inside the database by conditional updates, each mirroring a named check of `src/core/rules/rules.ts`;
 * the caller words a refusal with those same checks, from the figures returned.
 * - `caller`: the user and wallet, given (`topupInOneStatement`) or found by the token's hash, unrevoked
 *   (`topupByTokenInOneStatement`, as `authentication.ts` finds them); none, and nothing below happens.
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
function topupStatement(
  caller: RawBuilder<unknown>,
  ...[cardId, amount, at, threshold, revenueAccountId, transactionId, reference]: TopupArgs
): RawBuilder<Row> {
  return sql<Row>`
    with caller as (${caller}),
    card as (
      select id, user_id, account_id, status, category, deposit, limit_amount, currency, last_topup_attempt_at,
        (last_topup_attempt_at is null or last_topup_attempt_at <= ${threshold}) as cooled
      from cards where id = ${cardId} and user_id = (select user_id from caller)
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
      from priced cross join caller
      where accounts.id = caller.wallet_account_id and accounts.kind <> 'system'
        and priced.cooled
        and priced.status not in ('closed', 'processing')
        and priced.deposit + ${amount}::bigint <= priced.limit_amount
        and accounts.balance - (${amount}::bigint + priced.fee) >= 0
      returning accounts.id, accounts.balance, priced.fee, priced.account_id as card_account_id
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
        (wallet.id, -(${amount}::bigint + wallet.fee)),
        (wallet.card_account_id, ${amount}::bigint),
        (${revenueAccountId}::integer, wallet.fee)
      ) as posting (account_id, amount)
      where posting.amount <> 0
    ),
    counted as (
      insert into card_transaction_counts as counts (user_id, card_id, transactions, last_position)
      select card.user_id, card.id, 1, 1 from journal cross join card
      on conflict (user_id, card_id) do update
      set transactions = counts.transactions + 1, last_position = counts.last_position + 1
      returning counts.last_position
    ),
    line as (
      insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
        original_amount, original_currency, decline_code, created_at, updated_at, card_position, position_given)
      select ${transactionId}, card.id, card.user_id, journal.id, 'Approved', 'Credit', ${amount}::bigint, card.currency, 'topup',
        'Wallet top-up', ${amount}::bigint, card.currency, null, ${at}, ${at}, counted.last_position, true
      from journal cross join card cross join counted
    )
    select caller.user_id, caller.wallet_account_id, caller.token_id, caller.last_used_at,
      priced.status, priced.category, priced.currency, priced.last_topup_attempt_at, priced.deposit, priced.limit_amount,
      priced.cooled, priced.fee, journal.id as journal_id, wallet.balance as wallet_balance, card_account.balance as card_balance,
      (select balance from accounts where id = caller.wallet_account_id) as wallet_available
    from (select 1) as one
      left join caller on true left join priced on true left join wallet on true left join card_account on true
      left join journal on true
  `;
}

/** The top-up of a caller already known (the bot's, or the API's with an `Idempotency-Key`). */
export const topupInOneStatement = compiledOnce(9, (ex, userId: string, walletAccountId: number, ...args: TopupArgs) => ({
  compile: () =>
    topupStatement(
      sql`select ${userId}::text as user_id, ${walletAccountId}::integer as wallet_account_id, null::text as token_id, null::text as last_used_at`,
      ...args,
    ).compile(ex),
}));

/** The top-up of the holder of a token, the token checked by the same statement (the HTTP route's one round trip). */
export const topupByTokenInOneStatement = compiledOnce(8, (ex, tokenHash: string, ...args: TopupArgs) => ({
  compile: () =>
    topupStatement(
      sql`select users.id as user_id, users.wallet_account_id, api_tokens.id as token_id, api_tokens.last_used_at
        from api_tokens join users on users.id = api_tokens.user_id
        where api_tokens.token_hash = ${tokenHash} and api_tokens.revoked_at is null`,
      ...args,
    ).compile(ex),
}));

/**
 * Runs the top-up statement for `who` and reads its one row: `topupInOneStatement` for a known caller,
 * `topupByTokenInOneStatement` for a token's holder.
 */
export async function topupOnce(ex: Executor, who: Caller | TokenHolder, args: TopupArgs): Promise<TopupOutcome> {
  const row = isTokenHolder(who)
    ? await topupByTokenInOneStatement.executeTakeOne(ex, who.tokenHash, ...args)
    : await topupInOneStatement.executeTakeOne(ex, who.userId, who.walletAccountId, ...args);
  const outcome: TopupOutcome = { walletAvailable: Number(row.wallet_available ?? 0) };
  if (row.user_id !== null) {
    outcome.caller = { userId: row.user_id, walletAccountId: Number(row.wallet_account_id) };
    if (row.token_id !== null) outcome.tokenUse = { tokenId: row.token_id, lastUsedAt: row.last_used_at };
  }
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
