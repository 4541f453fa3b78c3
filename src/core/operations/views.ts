import type { BinRow, CardOtpRow, CardRow, CardTransactionRow, CardType, PlanRow } from '../../db/schema.js';
import { autoTopupOf, controlsOf, type AutoTopup, type CardControls, type Spending } from '../authorization/controls.js';
import type { Cents } from '../ledger/money.js';
import type { BillingAddress } from '../provider/provider.js';
import type { ErrorCode, ParamsOf } from '../rules/errors.js';
import type { PlainRefusal } from '../rules/refusal.js';
import type * as promised from '../../interface/objects.js';

/**
 * What the core returns: the interface's objects (src/interface/objects.ts), each extended with what ours
 * always fills. Amounts are integer cents; the edges format them.
 */

export type { Page, SensitiveCardDetails, StatusChange } from '../../interface/objects.js';

export interface Caller {
  userId: string;
  walletAccountId: number;
}

export type CardStatus = CardRow['status'];
export type CardCategory = CardRow['category'];

export interface Card extends promised.Card {
  /** The card's small integer number (the OTP list's `cardInfo.id`). */
  number: number;
  createdAt: string;
  updatedAt: string;
  category: CardCategory;
  deposit: Cents;
  limit: Cents;
  planId: number;
  status: CardStatus;
  currencyShortName: string;
  binId: string;
  threeDS: boolean;
  /** False while the card carries a temporary provider id. */
  providerReady: boolean;
  address: BillingAddress;
  /** While `processing`: the creation fee held from the wallet for it (not in the spec's card). */
  heldFee?: Cents;
  /** Chosen at creation: `multi_use`, `single_use` or `merchant_locked`. */
  type: CardType;
  /** The cardholder's spending controls. */
  controls: CardControls;
  /** What the card has spent today and this month (UTC): approved purchases, held or cleared. */
  spentToday: Cents;
  spentThisMonth: Cents;
  /** The interface's earlier `auto_topup`. */
  autoTopup: AutoTopup;
}

/** What a card just created has spent. */
export const NOTHING_SPENT: Spending = { today: 0, thisMonth: 0 };

export interface Bin extends promised.Bin {
  network: string;
  country: string;
  initialBalance: Cents;
  enabled: boolean;
}

export interface Plan extends promised.Plan {
  active: boolean;
  createdAt: string;
}

/** What a card creation would cost, before confirming it. */
export interface CreationQuote {
  /** The plan's creation fee, and the fee after the coupon. */
  planFee: Cents;
  fee: Cents;
  walletBalance: Cents;
  /** The wallet after the fee; below zero when the wallet cannot pay it. */
  walletAfter: Cents;
  /** What the BIN puts on the new card. */
  initialBalance: Cents;
}

export interface TopupQuote {
  cardId: string;
  category: CardCategory;
  amount: Cents;
  platformFee: Cents;
  totalCharged: Cents;
  walletBalance: Cents;
  /** How much more the card's plan allows to be deposited. */
  depositAvailable: Cents;
  /** The largest top-up that the plan's limit and the wallet allow now (fee included), at most the top-up maximum. */
  maxAmount: Cents;
  /** Seconds until the card's top-up cooldown has passed; 0 when none. */
  cooldownSeconds: number;
  /** The refusal the top-up would meet now (code, figures, text), from the operation's own checks; absent when it would pass. */
  refusal?: QuotedRefusal;
}

/** What a withdrawal from a card may take now. */
export interface WithdrawalQuote {
  cardId: string;
  cardBalance: Cents;
  /** The card's balance, at most the withdrawal maximum. */
  maxAmount: Cents;
  /** Seconds until the card's withdrawal cooldown has passed; 0 when none. */
  cooldownSeconds: number;
  /** The refusal a withdrawal (of the quoted amount, when one is given) would meet now; absent when it would pass. */
  refusal?: QuotedRefusal;
}

/** A refusal as a quote carries it: plain data, one of the core's coded refusals. */
export type QuotedRefusal = PlainRefusal<ErrorCode, ParamsOf<ErrorCode>>;

export interface TopupResult extends promised.TopupResult {
  invoiceId: number;
  walletBalance: Cents;
}

export interface WithdrawResult extends promised.WithdrawResult {
  invoiceId: number;
  walletBalance: Cents;
}

export interface CloseResult extends promised.CloseResult {
  invoiceId: number | null;
  newWalletBalance: Cents;
}

export interface CardTransaction extends promised.CardTransaction {
  status: CardTransactionRow['status'];
  side: CardTransactionRow['side'];
  originalAmount: Cents;
  originalCurrency: string;
  updatedAt: string;
}

export interface CardOtp extends promised.CardOtp {
  /** Ours: the merchant the code confirms a payment at. */
  merchantName: string;
}

export interface OtpList extends promised.OtpList {
  otps: CardOtp[];
  cardInfo: { id: number; nickname: string };
}

export interface RequestedOtp extends promised.RequestedOtp {
  cardInfo: { id: string; providerCardId: string; name: string; otpCode: string };
}

export interface Wallet extends promised.Wallet {
  updatedAt: string;
}

export interface Health extends promised.Health {
  status: 'healthy';
  environment: string;
  timestamp: string;
}

export type CardWithBalance = CardRow & { balance: number };

/** The columns `toCard` reads (a statement that returns a card names them: `settleCreation`). */
export type CardViewRow = Pick<
  CardWithBalance,
  | 'id'
  | 'number'
  | 'created_at'
  | 'updated_at'
  | 'category'
  | 'masked_pan'
  | 'name'
  | 'balance'
  | 'deposit'
  | 'limit_amount'
  | 'plan_id'
  | 'status'
  | 'currency'
  | 'bin_id'
  | 'three_ds'
  | 'provider_ready'
  | 'address'
  | 'type'
  | 'per_purchase_limit'
  | 'daily_limit'
  | 'monthly_limit'
  | 'blocked_categories'
  | 'auto_topup_enabled'
  | 'auto_topup_min_balance'
  | 'auto_topup_amount'
  | 'auto_topup_last_triggered'
>;

/** The card of `row`, with what it has spent (`spendingOf`; `NOTHING_SPENT` for a card just created). */
export function toCard(row: CardViewRow, spending: Spending): Card {
  return {
    id: row.id,
    number: row.number,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    category: row.category,
    maskedPan: row.masked_pan,
    name: row.name,
    balance: Number(row.balance),
    deposit: Number(row.deposit),
    limit: Number(row.limit_amount),
    planId: row.plan_id,
    status: row.status,
    currency: row.currency,
    currencyShortName: row.currency,
    binId: row.bin_id,
    threeDS: Boolean(row.three_ds),
    providerReady: Boolean(row.provider_ready),
    address: JSON.parse(row.address) as BillingAddress,
    type: row.type,
    controls: controlsOf(row),
    spentToday: spending.today,
    spentThisMonth: spending.thisMonth,
    autoTopup: autoTopupOf(row),
  };
}

export function toBin(row: BinRow): Bin {
  return {
    id: row.id,
    bin: row.bin,
    network: row.network,
    threeDS: Boolean(row.three_ds),
    wallet: Boolean(row.wallet),
    currency: row.currency,
    country: row.country,
    initialBalance: Number(row.initial_balance),
    enabled: Boolean(row.enabled),
  };
}

export function toPlan(row: PlanRow): Plan {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    limit: Number(row.limit_amount),
    creationFee: Number(row.creation_fee),
    active: Boolean(row.active),
    createdAt: row.created_at,
  };
}

export function toCardTransaction(row: CardTransactionRow & { card_name: string; masked_pan: string }): CardTransaction {
  return {
    id: row.id,
    cardId: row.card_id,
    cardName: row.card_name,
    status: row.status,
    side: row.side,
    amount: Number(row.amount),
    currency: row.currency,
    type: row.type,
    maskedPan: row.masked_pan,
    merchantName: row.merchant_name,
    originalAmount: Number(row.original_amount),
    originalCurrency: row.original_currency,
    declineCode: row.decline_code,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toCardOtp(row: CardOtpRow, card: { name: string; masked_pan: string }): CardOtp {
  return {
    id: row.id,
    code: row.code,
    amount: Number(row.amount),
    currency: row.currency,
    maskedPan: card.masked_pan,
    cardName: card.name,
    merchantName: row.merchant_name,
    createdAt: row.created_at,
  };
}
