/**
 * The objects of the card-service interface, declared once for every side: what the spec promises of its
 * resources and of each endpoint's answer (sections 2 and 4), in our words: camelCase, amounts as integer
 * cents. The embedded core's views extend them with what ours always fills (src/core/operations/views.ts);
 * the bot's port reads them, with what only ours fills optional (src/bot/card-service/port.ts); a remote
 * service's answers are parsed into them (src/remote/shapes.ts).
 *
 * The folder is named after the spec ("Virtual Card Service Interface"), which belongs to no side: so this
 * module imports nothing of ours, and every folder may import it (test/layout.test.ts).
 *
 * A field is required where a client can count on it: every shape the spec shows (an earlier and a current
 * one are both in use) carries it, or it has a plain reading when a service leaves it out (an empty masked
 * number, `USD`). It is optional where a shape lacks it or services leave it out.
 */

/** An amount in integer cents, as money is held everywhere inside; the spec's decimal USD only at the edges. */
export type Cents = number;

/** A card's state (spec section 3); `processing` is the earlier shape's `Processing`: not issued yet. */
export type CardStatus = 'processing' | 'active' | 'frozen' | 'closed';

/** Spec 2.3: a card, without its card data. */
export interface Card {
  id: string;
  name: string;
  maskedPan: string;
  balance: Cents;
  status: CardStatus;
  /** `Wallet` or `Online` (the earlier shape may carry other labels). */
  category: string;
  currency: string;
  /** All deposits made to the card: what its plan's limit bounds (spec 4.6, rule 2). */
  deposit?: Cents;
  binId?: string;
  threeDS?: boolean;
  createdAt?: string;
  updatedAt?: string;
}

/** Spec 2.3 and 4.10: the one record that carries card data. */
export interface SensitiveCardDetails {
  id: string;
  pan: string;
  cvv: string;
  exp: string;
  maskedPan: string;
  name: string;
}

/** Spec 2.4: a BIN cards are created from. The earlier shape has no network, country or initial balance. */
export interface Bin {
  id: string;
  bin: string;
  threeDS: boolean;
  wallet: boolean;
  currency: string;
  network?: string;
  country?: string;
  /** What the BIN puts on a new card. */
  initialBalance?: Cents;
}

/** Spec 2.5: a card plan; only active ones are listed. */
export interface Plan {
  id: number;
  name: string;
  description: string;
  /** The most the card's deposits may come to. */
  limit: Cents;
  creationFee: Cents;
  createdAt?: string;
}

/** Spec 2.6: one line of a card's statement. */
export interface CardTransaction {
  id: string;
  cardId: string;
  cardName: string;
  /** `Approved`, `Declined`, … */
  status: string;
  side: 'Debit' | 'Credit';
  amount: Cents;
  currency: string;
  type: string;
  maskedPan: string;
  merchantName: string;
  declineCode: string | null;
  createdAt: string;
  originalAmount?: Cents;
  originalCurrency?: string;
  updatedAt?: string;
}

/** Spec 2.6 and 4.12: a page of a list, and where it stands. */
export interface Page<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number; totalPages: number; hasNext: boolean; hasPrev: boolean };
}

/** Spec 2.7: a one-time code that came for a card. */
export interface CardOtp {
  id: string;
  code: string;
  amount: Cents;
  currency: string;
  maskedPan: string;
  cardName: string;
  createdAt: string;
}

/** Spec 4.13: a card's codes; `cardInfo.id` is an integer in the spec, a string at some services. */
export interface OtpList {
  otps: CardOtp[];
  cardInfo?: { id: number | string; nickname?: string | null };
}

/** Spec 4.14: an OTP asked for by e-mail; the card and the code as far as the service gives them. */
export interface RequestedOtp {
  message: string;
  cardInfo?: { id?: string; providerCardId?: string; name?: string; otpCode?: string };
}

/** Spec 2.8. */
export interface Wallet {
  balance: Cents;
  updatedAt?: string;
}

/** Spec 2.2: a healthy service says `healthy`. */
export interface Health {
  status: string;
  environment?: string;
  timestamp?: string;
}

/** Spec 4.6; the earlier shape has no wallet balance or invoice. */
export interface TopupResult {
  cardId: string;
  transactionId: string;
  platformFee: Cents;
  totalCharged: Cents;
  newCardBalance: Cents;
  walletBalance?: Cents;
  invoiceId?: number;
}

/** Spec 4.7; the earlier shape has no invoice. */
export interface WithdrawResult {
  cardId: string;
  transactionId: string;
  amountWithdrawn: Cents;
  newCardBalance: Cents;
  walletBalance?: Cents;
  invoiceId?: number;
}

/** Spec 4.11: the balance left goes back to the wallet; no transaction (null) when there was none. */
export interface CloseResult {
  cardId: string;
  balanceWithdrawn: Cents;
  transactionId: string | null;
  newWalletBalance?: Cents;
  invoiceId?: number | null;
}

/** Spec 4.8 and 4.9. */
export interface StatusChange {
  cardId: string;
  status: CardStatus;
}

/** Spec 4.4: a creation's body, in the wire's names. */
export interface CreateCardInput {
  bin_id: string;
  planId: number;
  name: string;
  coupon_id?: string;
}

/** Spec 4.12: a statement's query, in the wire's names. */
export interface TransactionsQuery {
  page?: number;
  limit?: number;
  card_id?: string;
}
