import { sql } from 'kysely';
import { compiledOnce } from '../../../db/compiled-query.js';
import type { CouponRow } from '../../../db/schema.js';
import type { Cents } from '../../ledger/money.js';
import type { CardViewRow } from '../../operations/views.js';
import type { IssuingBin } from '../port.js';
import { journalEntries, staleOperations } from './withdraw-statements.js';

// Over 300 lines: the hold and the settling of a creation are two statements whose checks mirror each other, kept
// side by side so that a change to one is seen beside the other.

// A card's creation as two Postgres statements, one each side of the provider call (`createCard` in
// `operations/card-creation.ts`; in steps, `../portable/creation.ts`), as a withdrawal's are (`withdraw-statements.ts`). The rules decide inside the database
// by conditional updates, each mirroring a named check of `src/core/rules/rules.ts`; the caller words a
// refusal with those same checks, from the figures returned.

/** What the hold statement did, and what the named checks need to word a refusal. */
export interface CreationHold {
  /** The caller has operations pending past the grace period: nothing was done (the recovery runs first). */
  stale: boolean;
  /** The enabled BIN named; undefined when there is none. */
  bin?: IssuingBin;
  /** The active plan's limit; undefined when there is no such plan. */
  plan?: { limit: Cents };
  /** The coupon named, its row locked; undefined when none is named or there is no such coupon. */
  coupon?: Pick<CouponRow, 'active' | 'expires_at' | 'max_redemptions' | 'redemptions'>;
  /** The plan's fee less the coupon (`discounted`), when the checks before the wallet passed. */
  fee?: Cents;
  /** The wallet's balance as the statement found it (for a refusal's figures). */
  walletAvailable: Cents;
  /** Set once the fee is held. */
  heldJournalId?: number;
}

interface HoldRow {
  stale: boolean;
  bin: string | null;
  country: string | null;
  currency: string | null;
  initial_balance: number | null;
  limit_amount: number | null;
  coupon_found: boolean;
  active: number | null;
  expires_at: string | null;
  max_redemptions: number | null;
  redemptions: number | null;
  fee: number | null;
  wallet_available: number;
  journal_id: number | null;
}

/**
 * The hold: steps of `createCard`'s first transaction, as data-modifying CTEs, each refusal doing nothing.
 * - `stale` (`staleOperations`); `bin` and `plan`: the enabled BIN and the active plan (`binAndPlan`).
 * - `coupon`: the coupon named, its row locked (a creation beside this one redeeming it waits, then this
 *   one sees its redemption).
 * - `priced`: the fee less the coupon (`discounted`: percent half-up), when the BIN's initial balance is
 *   within the plan's limit (`initialBalanceRefusal`) and the coupon can be redeemed (`couponRefusal`).
 * - `debit`: the fee off the wallet, only when it covers it (`creationFeeRefusal`). The update that decides
 *   comes first: everything after it writes only once it has.
 * - `redeemed`: the coupon's redemption (`creationFee`: redemptions left, `couponRefusal`); `card_account`
 *   and `card`: the card in `processing` with its account (`writeProcessingCard`); the hold's journal, its
 *   entries (the in-flight account's entry alone, `Posting.system`) and the pending operation (`hold`).
 */
export const holdCreation = compiledOnce(
  14,
  (
    ex,
    userId: string,
    walletAccountId: number,
    binId: string,
    planId: number,
    couponId: string | null,
    at: string,
    staleBefore: string,
    cardId: string,
    name: string,
    type: string,
    providerCardId: string,
    address: string,
    inFlightAccountId: number,
    reference: string,
  ) => ({
    compile: () =>
      sql<HoldRow>`
        with ${staleOperations(userId, staleBefore)},
        bin as (
          select id, bin, country, currency, wallet, three_ds, initial_balance from bins where id = ${binId} and enabled = 1
        ),
        plan as (
          select id, creation_fee, limit_amount from plans where id = ${planId}::integer and active = 1
        ),
        coupon as (
          select id, kind, value, active, expires_at, max_redemptions, redemptions from coupons where id = ${couponId}::text for update
        ),
        priced as (
          select bin.id as bin_id, bin.currency, bin.wallet, bin.three_ds, plan.id as plan_id, plan.limit_amount,
            greatest(0, plan.creation_fee - coalesce(
              case coupon.kind when 'percent' then (plan.creation_fee * coupon.value + 5000) / 10000 else coupon.value end,
              0
            ))::bigint as fee
          from stale cross join bin cross join plan left join coupon on true
          where not stale.found
            and bin.initial_balance <= plan.limit_amount
            and (${couponId}::text is null or (
              coupon.active <> 0
              and (coupon.expires_at is null or coupon.expires_at > ${at})
              and (coupon.max_redemptions is null or coupon.redemptions < coupon.max_redemptions)
            ))
        ),
        debit as (
          update accounts set balance = accounts.balance - priced.fee, updated_at = ${at}
          from priced
          where accounts.id = ${walletAccountId}::integer and accounts.kind <> 'system'
            and accounts.balance - priced.fee >= 0
          returning priced.fee
        ),
        -- Counted from \`coupon\`, the row it locked (its newest version), and checked there by \`priced\`: the row
        -- being updated is read from the statement's snapshot first, so a condition on it, or a count taken from
        -- it (checked against the limit before the newer version is read), would miss or refuse a use when
        -- another creation's release lowered the count while this one waited for the lock.
        redeemed as (
          update coupons set redemptions = coupon.redemptions + 1
          from debit, coupon
          where coupons.id = coupon.id
        ),
        card_account as (
          insert into accounts (kind, code, balance, updated_at) select 'card', null, 0, ${at} from debit returning id
        ),
        card as (
          insert into cards (id, user_id, account_id, bin_id, plan_id, name, type, category, status, currency, three_ds, masked_pan,
            pan_encrypted, cvv_encrypted, exp, provider_card_id, provider_ready, address, limit_amount, deposit,
            last_topup_attempt_at, last_withdraw_attempt_at, created_at, updated_at)
          select ${cardId}, ${userId}, card_account.id, priced.bin_id, priced.plan_id, ${name}, ${type},
            case when priced.wallet <> 0 then 'Wallet' else 'Online' end, 'processing', priced.currency, priced.three_ds, '',
            '', '', '', ${providerCardId}, 0, ${address}, priced.limit_amount, 0,
            null, null, ${at}, ${at}
          from card_account cross join priced
        ),
        journal as (
          insert into journals (reference, kind, created_at) select ${reference}, 'create_card_hold', ${at} from debit returning id
        ),
        entries as (
          insert into entries (journal_id, account_id, amount)
          ${journalEntries('journal', 'debit', [
            [sql`${walletAccountId}::integer`, sql`-debit.fee`],
            [sql`${inFlightAccountId}::integer`, sql`debit.fee`],
          ])}
        ),
        pending as (
          insert into pending_operations (id, kind, user_id, card_id, account_id, amount, hold_journal_id, coupon_id, created_at)
          select ${cardId}, 'create_card', ${userId}, ${cardId}, ${walletAccountId}::integer, debit.fee, journal.id, ${couponId}::text, ${at}
          from journal cross join debit
        )
        select stale.found as stale, bin.bin, bin.country, bin.currency, bin.initial_balance, plan.limit_amount,
          coupon.id is not null as coupon_found, coupon.active, coupon.expires_at, coupon.max_redemptions, coupon.redemptions,
          priced.fee, (select balance from accounts where id = ${walletAccountId}::integer) as wallet_available,
          journal.id as journal_id
        from stale left join bin on true left join plan on true left join coupon on true left join priced on true
          left join journal on true
      `.compile(ex),
  }),
);

/** Reads `holdCreation`'s one row. */
export function toCreationHold(row: HoldRow): CreationHold {
  const hold: CreationHold = { stale: row.stale, walletAvailable: Number(row.wallet_available) };
  if (row.bin !== null) {
    hold.bin = { bin: row.bin, country: row.country!, currency: row.currency!, initial_balance: Number(row.initial_balance) };
  }
  if (row.limit_amount !== null) hold.plan = { limit: Number(row.limit_amount) };
  if (row.coupon_found) {
    hold.coupon = {
      active: Number(row.active),
      expires_at: row.expires_at,
      max_redemptions: row.max_redemptions === null ? null : Number(row.max_redemptions),
      redemptions: Number(row.redemptions),
    };
  }
  if (row.fee !== null) hold.fee = Number(row.fee);
  if (row.journal_id !== null) hold.heldJournalId = row.journal_id;
  return hold;
}

/** What the settling statement did. */
export interface CreationSettled {
  /** False when nothing was done; then why, from what it found. */
  taken: boolean;
  /** Whether the operation was still pending (the recovery had not taken it). */
  pending: boolean;
  /** The card-data key recorded as current, its row held (`lockCurrentCardDataKey`). */
  currentKey: string | null;
  /** Whether the card was still being created (`processing`). */
  processing: boolean;
  card?: CardViewRow;
}

type SettleRow = {
  taken: boolean;
  pending: boolean;
  current_key: string | null;
  processing: boolean;
} & { [K in keyof CardViewRow]: CardViewRow[K] | null };

/** What `issueCard` writes on the `processing` card: its sealed data, as the provider issued it. */
export interface IssuedCardData {
  maskedPan: string;
  panEncrypted: string;
  cvvEncrypted: string;
  exp: string;
  providerCardId: string;
  providerReady: number;
  address: string;
}

/**
 * The settling: `createCard`'s last transaction, as data-modifying CTEs.
 * - `card_key`: the current card-data key's row held, so a rotation waits (`lockCurrentCardDataKey`);
 *   `card`: the card, still `processing`, its row locked.
 * - `op`: whoever deletes the pending row settles the operation (`take`), only when the card data was sealed
 *   under the current key and the card is still being created; else nothing is done and the caller refuses
 *   as `issueCard` and `sealCardData` do.
 * - `fee_journal` and its entries: the fee from the in-flight account to the revenue account (`moveHeld`;
 *   both system accounts, entries alone).
 * - `issued`: the card's data, `active`, its deposit the BIN's initial balance (`issueCard`); `funded`, its
 *   journal, entries and statement line: the initial balance onto the card from the promotions account,
 *   when there is one.
 */
export const settleCreation = compiledOnce(
  18,
  (
    ex,
    cardId: string,
    userId: string,
    fingerprint: string,
    maskedPan: string,
    panEncrypted: string,
    cvvEncrypted: string,
    exp: string,
    providerCardId: string,
    providerReady: number,
    address: string,
    initialBalance: Cents,
    revenueAccountId: number,
    inFlightAccountId: number,
    promotionsAccountId: number,
    at: string,
    feeReference: string,
    initialReference: string,
    lineId: string,
  ) => ({
    compile: () =>
      sql<SettleRow>`
        with card_key as (
          update card_data_keys set state = card_data_keys.state where state = 'current' returning fingerprint
        ),
        card as (
          select id from cards where id = ${cardId} and user_id = ${userId} and status = 'processing' for update
        ),
        op as (
          delete from pending_operations
          where id = ${cardId}
            and exists (select 1 from card_key where fingerprint = ${fingerprint}) and exists (select 1 from card)
          returning amount
        ),
        fee_journal as (
          insert into journals (reference, kind, created_at) select ${feeReference}, 'creation_fee', ${at} from op returning id
        ),
        issued as (
          update cards set status = 'active', masked_pan = ${maskedPan}, pan_encrypted = ${panEncrypted}, cvv_encrypted = ${cvvEncrypted},
            exp = ${exp}, provider_card_id = ${providerCardId}, provider_ready = ${providerReady}::integer, address = ${address},
            deposit = ${initialBalance}::bigint, updated_at = ${at}
          from op
          where cards.id = ${cardId}
          returning cards.id, cards.number, cards.created_at, cards.updated_at, cards.category, cards.masked_pan, cards.name,
            cards.deposit, cards.limit_amount, cards.plan_id, cards.status, cards.currency, cards.bin_id, cards.three_ds,
            cards.provider_ready, cards.address, cards.account_id, cards.type, cards.per_purchase_limit, cards.daily_limit,
            cards.monthly_limit, cards.blocked_categories, cards.auto_topup_enabled, cards.auto_topup_min_balance,
            cards.auto_topup_amount, cards.auto_topup_last_triggered
        ),
        funded as (
          update accounts set balance = accounts.balance + ${initialBalance}::bigint, updated_at = ${at}
          from issued
          where accounts.id = issued.account_id and accounts.kind <> 'system' and ${initialBalance}::bigint > 0
          returning accounts.balance
        ),
        initial_journal as (
          insert into journals (reference, kind, created_at)
          select ${initialReference}, 'initial_balance', ${at} from funded returning id
        ),
        entries as (
          insert into entries (journal_id, account_id, amount)
          ${journalEntries('fee_journal', 'op', [
            [sql`${revenueAccountId}::integer`, sql`op.amount`],
            [sql`${inFlightAccountId}::integer`, sql`-op.amount`],
          ])}
          union all
          ${journalEntries('initial_journal', 'issued', [
            [sql`issued.account_id`, sql`${initialBalance}::bigint`],
            [sql`${promotionsAccountId}::integer`, sql`-${initialBalance}::bigint`],
          ])}
        ),
        line as (
          insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
            original_amount, original_currency, decline_code, created_at, updated_at, card_position)
          select ${lineId}, issued.id, ${userId}, initial_journal.id, 'Approved', 'Credit', ${initialBalance}::bigint, issued.currency,
            'initial_balance', 'Initial balance', ${initialBalance}::bigint, issued.currency, null, ${at}, ${at}, 0
          from initial_journal cross join issued
        )
        select exists (select 1 from op) as taken,
          exists (select 1 from pending_operations where id = ${cardId}) as pending,
          (select fingerprint from card_key) as current_key, exists (select 1 from card) as processing,
          issued.id, issued.number, issued.created_at, issued.updated_at, issued.category, issued.masked_pan, issued.name,
          coalesce(funded.balance, (select balance from accounts where id = issued.account_id)) as balance, issued.deposit,
          issued.limit_amount, issued.plan_id, issued.status, issued.currency, issued.bin_id, issued.three_ds, issued.provider_ready,
          issued.address, issued.type, issued.per_purchase_limit, issued.daily_limit, issued.monthly_limit, issued.blocked_categories,
          issued.auto_topup_enabled, issued.auto_topup_min_balance, issued.auto_topup_amount, issued.auto_topup_last_triggered
        from (select 1) as one left join issued on true left join funded on true
      `.compile(ex),
  }),
);

/** Reads `settleCreation`'s one row. */
export function toCreationSettled({ taken, pending, current_key, processing, ...card }: SettleRow): CreationSettled {
  const settled: CreationSettled = { taken, pending, currentKey: current_key, processing };
  if (taken) settled.card = card as CardViewRow;
  return settled;
}
