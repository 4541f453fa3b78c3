import type { ColumnType, Generated, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';

/** Money columns hold integer cents. Timestamps are ISO 8601 strings (UTC), which sort as they compare. */

export interface UsersTable {
  id: string;
  name: string;
  wallet_account_id: number;
  created_at: string;
}

export interface ApiTokensTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  revoked_at: string | null;
  /** The token's first characters, for an operator to tell tokens apart; null for tokens issued before it was kept. */
  prefix: string | null;
  /** Recorded at most once a minute per token. */
  last_used_at: string | null;
}

export type AccountKind = 'wallet' | 'card' | 'system';

export interface AccountsTable {
  id: Generated<number>;
  kind: AccountKind;
  /** Set for system accounts only, e.g. `platform:revenue`. */
  code: string | null;
  balance: number;
  updated_at: string;
}

export interface JournalsTable {
  id: Generated<number>;
  reference: string;
  kind: string;
  created_at: string;
}

export interface EntriesTable {
  id: Generated<number>;
  journal_id: number;
  account_id: number;
  amount: number;
}

export interface BinsTable {
  id: string;
  bin: string;
  network: string;
  three_ds: number;
  wallet: number;
  currency: string;
  country: string;
  initial_balance: number;
  enabled: number;
  created_at: string;
}

export interface PlansTable {
  id: Generated<number>;
  name: string;
  description: string;
  limit_amount: number;
  creation_fee: number;
  active: number;
  created_at: string;
}

export interface PlatformFeesTable {
  category: string;
  percent_bps: number;
  fixed_amount: number;
  updated_at: string;
}

export interface CouponsTable {
  id: string;
  kind: 'percent' | 'amount';
  /** Basis points for `percent`, cents for `amount`. */
  value: number;
  expires_at: string | null;
  max_redemptions: number | null;
  redemptions: number;
  active: number;
  created_at: string;
}

export interface CardsTable {
  number: Generated<number>;
  id: string;
  user_id: string;
  account_id: number;
  bin_id: string;
  plan_id: number;
  name: string;
  category: 'Wallet' | 'Online';
  /** `processing` while the creation waits on the provider (migrations/20261126_01_holds_shown.ts): no card data yet. */
  status: 'processing' | 'active' | 'frozen' | 'closed';
  currency: string;
  three_ds: number;
  masked_pan: string;
  pan_encrypted: string;
  cvv_encrypted: string;
  exp: string;
  provider_card_id: string;
  provider_ready: number;
  address: string;
  limit_amount: number;
  deposit: number;
  last_topup_attempt_at: string | null;
  last_withdraw_attempt_at: string | null;
  /** Until when a freeze or unfreeze waiting on the provider holds the card's status; null when none does. */
  status_change_until: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
  updated_at: string;
  /** What purchases it takes (migrations/20261129_01_authorizations.ts): any, its first only, or its first merchant's. */
  type: ColumnType<CardType, CardType | undefined, CardType>;
  /** The merchant a `merchant_locked` card is locked to: its first purchase's; null until then. */
  locked_merchant: ColumnType<string | null, string | null | undefined, string | null>;
  /** The cardholder's spending controls, in cents; null is none. */
  per_purchase_limit: ColumnType<number | null, number | null | undefined, number | null>;
  daily_limit: ColumnType<number | null, number | null | undefined, number | null>;
  monthly_limit: ColumnType<number | null, number | null | undefined, number | null>;
  /** The blocked merchant-category groups (src/core/authorization/categories.ts), a JSON array of their names. */
  blocked_categories: ColumnType<string, string | undefined, string>;
  /** Auto top-up (the interface's earlier `auto_topup`): 1 when on; amounts in cents. */
  auto_topup_enabled: ColumnType<number, number | undefined, number>;
  auto_topup_min_balance: ColumnType<number, number | undefined, number>;
  auto_topup_amount: ColumnType<number, number | undefined, number>;
  auto_topup_last_triggered: ColumnType<string | null, string | null | undefined, string | null>;
}

export type CardType = 'multi_use' | 'single_use' | 'merchant_locked';

/** One per authorization the provider asked about (migrations/20261129_01_authorizations.ts); its statement line has its id. */
export interface CardAuthorizationsTable {
  id: string;
  /** The provider's id of the transaction: an authorization asked again is found by it and answered the same. */
  provider_transaction_id: string;
  card_id: string;
  user_id: string;
  status: 'pending' | 'cleared' | 'voided' | 'expired' | 'declined';
  /** Cents asked (and held, when approved). */
  amount: number;
  /** Cents the clearing took; null until cleared. */
  cleared_amount: number | null;
  currency: string;
  merchant_name: string;
  merchant_mcc: string;
  merchant_country: string;
  decline_code: string | null;
  /** When a hold still pending is released. */
  expires_at: string;
  created_at: string;
  updated_at: string;
}

/** A purchase approval asked in chat (3-D Secure out of band), answered once. */
export interface CardChallengesTable {
  id: string;
  card_id: string;
  user_id: string;
  amount: number;
  currency: string;
  merchant_name: string;
  status: 'pending' | 'approved' | 'declined' | 'expired';
  created_at: string;
  expires_at: string;
  answered_at: string | null;
}

/** An event Lithic delivered, once by its `webhook-id` (migrations/20261129_02_lithic_events.ts). */
export interface LithicEventsTable {
  webhook_id: string;
  event_type: string;
  status: 'received' | 'handled' | 'unknown' | 'review';
  note: string | null;
  received_at: string;
  handled_at: string | null;
}

/** A card transaction's event (Lithic's event token) applied once, whichever webhook carried it first. */
export interface LithicTransactionEventsTable {
  event_token: string;
  transaction_token: string;
  type: string;
  applied_at: string;
}

/** A 3-D Secure challenge Lithic asked for, its Lithic token, and the answer once sent back. */
export interface LithicThreeDsTable {
  challenge_id: string;
  three_ds_token: string;
  sent_answer: 'APPROVE' | 'DECLINE_BY_CUSTOMER' | null;
  sent_at: string | null;
}

/** A provider's secret by name (Lithic's ASA and webhook secrets), sealed with the card-data key (migrations/20261129_03_provider_secrets.ts). */
export interface ProviderSecretsTable {
  name: string;
  /** Sealed under the card-data key, bound to `provider_secrets:<name>` (src/core/keys/provider-secrets.ts). */
  value_encrypted: string;
  updated_at: string;
}

/** The fingerprints of the card-data keys, never the keys: one current, the rest retired by rotations. */
export interface CardDataKeysTable {
  fingerprint: string;
  state: 'current' | 'retired';
  created_at: string;
  retired_at: string | null;
}

export interface CardTransactionsTable {
  seq: Generated<number>;
  id: string;
  card_id: string;
  user_id: string;
  /**
   * The line's place in its card's statement, 1, 2, … in the order written (never shown). Stamped on
   * insert (src/core/operations/card-records.ts; on Postgres by a trigger); migrations/20261124_04_card_positions.ts.
   */
  card_position: number;
  /**
   * Postgres: true when the writer took the position itself (the top-up statement), so the trigger did not;
   * null otherwise (migrations/20261127_01_positions_given.ts).
   */
  position_given: boolean | null;
  journal_id: number | null;
  /**
   * `Pending` while the withdrawal or closure it belongs to waits on the provider (its id is the operation's),
   * or while a purchase's authorization is held and not yet cleared; `Reversed` once that hold was voided or expired.
   */
  status: 'Approved' | 'Declined' | 'Pending' | 'Reversed';
  side: 'Debit' | 'Credit';
  amount: number;
  currency: string;
  type: string;
  merchant_name: string;
  original_amount: number;
  original_currency: string;
  decline_code: string | null;
  created_at: string;
  updated_at: string;
}

/** The statement lines per user and card, kept by triggers on `card_transactions`. */
export interface CardTransactionCountsTable {
  user_id: string;
  card_id: string;
  transactions: number;
  /** The highest position given to the card's lines; never goes down, so a deleted line's position is never reused. */
  last_position: number;
}

export interface CardOtpsTable {
  seq: Generated<number>;
  id: string;
  card_id: string;
  code: string;
  amount: number;
  currency: string;
  merchant_name: string;
  source: 'push' | 'email';
  created_at: string;
}

export interface SandboxMailboxTable {
  id: Generated<number>;
  provider_card_id: string;
  code: string;
  received_at: string;
  taken_at: string | null;
}

export interface OutboxTable {
  seq: Generated<number>;
  user_id: string;
  kind: 'otp' | 'card_transaction' | 'deposit_decision' | 'challenge' | 'auto_topup';
  payload: string;
  created_at: string;
  delivered_at: string | null;
  /** The bot process working on the row (`src/db/claims.ts`), until `claimed_until`; null when unclaimed. */
  claimed_by: string | null;
  claimed_until: string | null;
}

/**
 * An operation waiting on the card provider (src/core/operations/pending-operations.ts): what it holds, until it is
 * settled and its row deleted.
 */
export interface PendingOperationsTable {
  id: string;
  kind: 'withdraw' | 'close' | 'create_card';
  user_id: string;
  /** The card operated on; for a creation, the id the new card will have. */
  card_id: string;
  /** The account the amount was held from; null when nothing is held (a closure). */
  account_id: number | null;
  amount: number;
  /** The journal that moved `amount` into the in-flight account; null when nothing is held. */
  hold_journal_id: number | null;
  /** The coupon a creation redeemed. */
  coupon_id: string | null;
  created_at: string;
}

export interface Database {
  users: UsersTable;
  api_tokens: ApiTokensTable;
  accounts: AccountsTable;
  journals: JournalsTable;
  entries: EntriesTable;
  bins: BinsTable;
  plans: PlansTable;
  platform_fees: PlatformFeesTable;
  coupons: CouponsTable;
  cards: CardsTable;
  card_data_keys: CardDataKeysTable;
  card_transactions: CardTransactionsTable;
  card_transaction_counts: CardTransactionCountsTable;
  card_otps: CardOtpsTable;
  sandbox_mailbox: SandboxMailboxTable;
  outbox: OutboxTable;
  pending_operations: PendingOperationsTable;
  card_authorizations: CardAuthorizationsTable;
  card_challenges: CardChallengesTable;
  lithic_events: LithicEventsTable;
  lithic_transaction_events: LithicTransactionEventsTable;
  lithic_three_ds: LithicThreeDsTable;
  provider_secrets: ProviderSecretsTable;
}

export type Db = Kysely<Database>;
/** A database handle or an open transaction: repository functions take either. */
export type Executor = Kysely<Database> | Transaction<Database>;

export type CardRow = Selectable<CardsTable>;
export type NewCardRow = Insertable<CardsTable>;
export type NewCardTransactionRow = Insertable<CardTransactionsTable>;
export type CardUpdate = Updateable<CardsTable>;
export type BinRow = Selectable<BinsTable>;
export type PlanRow = Selectable<PlansTable>;
export type CouponRow = Selectable<CouponsTable>;
export type CardTransactionRow = Selectable<CardTransactionsTable>;
export type CardOtpRow = Selectable<CardOtpsTable>;
export type OutboxRow = Selectable<OutboxTable>;
export type PendingOperationRow = Selectable<PendingOperationsTable>;
export type CardAuthorizationRow = Selectable<CardAuthorizationsTable>;
export type CardChallengeRow = Selectable<CardChallengesTable>;
