import type { Cents } from '../ledger/money.js';
import type { Merchant } from './decision.js';
import type { DeclineCode, DeclineFix } from './declines.js';

export type { Merchant } from './decision.js';

/** What the provider asks about: a purchase today (the next issue's provider may add more kinds). */
export type AuthorizationKind = 'purchase';

/** An authorization as the provider asks it (`authorize`): amounts in cents, in the card's currency. */
export interface AuthorizationInput {
  cardId: string;
  amount: Cents;
  currency: string;
  merchant: Merchant;
  kind: AuthorizationKind;
  /** The provider's id of the transaction: asked again, the first answer is given again. */
  providerTransactionId: string;
  /**
   * Whether an approval is pushed to chat as `Pending` (true by default). The sandbox's purchase that
   * authorizes and clears at once says false: its clearing pushes the one `Approved` event.
   */
  announcePending?: boolean;
}

export interface AuthorizationRequest extends Required<AuthorizationInput> {
  now: Date;
}

/** What auto top-up did during the operation, if it was asked to run. */
export interface AutoTopupOutcome {
  outcome: 'done' | 'failed';
  amount: Cents;
  reason: 'wallet_short' | 'plan_limit' | 'rate_limited' | null;
}

export interface AuthorizationDecision {
  /** The authorization's id, its statement line's too (what `clear` and `void` in the sandbox take). */
  authorizationId: string;
  providerTransactionId: string;
  cardId: string;
  approved: boolean;
  declineCode: DeclineCode | null;
  /** What fixes the decline (null when approved, when nothing should be offered, or when answered again). */
  fix: DeclineFix | null;
  amount: Cents;
  /** The card's available balance once decided (a hold already off it). */
  cardBalance: Cents;
  autoTopup: AutoTopupOutcome | null;
  /** True when this answer is the first one given again (the provider asked twice). */
  replayed: boolean;
}

export interface ClearingInput {
  providerTransactionId: string;
  /** What the merchant takes, when not what was held: less, or more within `CLEARING_TOLERANCE_PERCENT`. */
  amount?: Cents;
  /** Whether the clearing is pushed to chat as `Approved` (true by default). */
  announce?: boolean;
}

export interface ClearingRequest {
  providerTransactionId: string;
  amount: Cents | null;
  announce: boolean;
  now: Date;
}

export interface ClearingResult {
  authorizationId: string;
  cardId: string;
  /** `refused`: more than the tolerance over the hold, or more than the card (and any auto top-up) covers; the hold stays. */
  status: 'cleared' | 'refused';
  reason: 'over_tolerance' | 'insufficient_funds' | null;
  held: Cents;
  clearedAmount: Cents;
  cardBalance: Cents;
  /** A single-use card's first clearing: the card is then closed (`authorization/engine.ts`). */
  closesCard: boolean;
  autoTopup: AutoTopupOutcome | null;
  replayed: boolean;
}

export interface ReleaseRequest {
  providerTransactionId: string;
  why: 'voided' | 'expired';
  /**
   * A void of part of the hold (a partial reversal): `amount` released, the rest still held and pending;
   * `key` makes it once (the provider's event token: the same key again moves nothing). All of the hold or
   * more releases it whole.
   */
  part?: PartialRelease;
  now: Date;
}

export interface PartialRelease {
  amount: Cents;
  key: string;
}

export interface ReleaseResult {
  authorizationId: string;
  cardId: string;
  /** `pending`: part of the hold released (`ReleaseRequest.part`), the rest (`stillHeld`) held. */
  status: 'voided' | 'expired' | 'pending';
  /** What this release gave back to the card (a replay: what the first one did). */
  amount: Cents;
  /** What the authorization still holds: 0 once released whole. */
  stillHeld: Cents;
  cardBalance: Cents;
  replayed: boolean;
}

/** Refusals of the authorization engine's callers (the provider, the sandbox): a transaction it does not know, or in the wrong state. */
export class AuthorizationError extends Error {
  override readonly name = 'AuthorizationError';
  constructor(
    readonly code: 'unknown_card' | 'unknown_transaction' | 'not_pending' | 'invalid_request',
    message: string,
  ) {
    super(message);
  }
}
