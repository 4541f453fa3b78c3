import type { BinRow, CardRow } from '../../db/schema.js';
import type { OperationDeps } from '../deps.js';
import type { Cents } from '../ledger/money.js';
import type { TokenHolder } from '../operations/authentication.js';
import type { Caller, Card, CloseResult, TopupResult, WithdrawResult } from '../operations/views.js';
import type { IssuedCard } from '../provider/provider.js';
import type { CreateCardInput } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import type {
  AuthorizationDecision,
  AuthorizationRequest,
  ClearingRequest,
  ClearingResult,
  ReleaseRequest,
  ReleaseResult,
} from '../authorization/types.js';

/**
 * Where money moves: every movement that writes balances, journals and statement lines, each as the
 * transactions it takes. An operation checks its input, calls the store, and returns what it gives; the
 * provider is called between a hold and its settling, outside any transaction (`pending-operations.ts`).
 * Two implementations, chosen once by `createCardService`: `portable/` (Kysely's steps, on SQLite and
 * Postgres) and `postgres/` (each transaction as one statement, one round trip). Both refuse with the same
 * named checks of `rules/rules.ts` in the same order, so the spec's refusals do not depend on the store.
 *
 * A movement the provider must confirm is a hold then a settling (`holdWithdrawal`, `settleWithdrawal`); an
 * authorization's hold and clearing take the same shape (`holdAuthorization`, `clearAuthorization`), the
 * hold in the `platform:authorized` account until cleared or released.
 */
export interface MoneyStore {
  /**
   * Spec 4.6: the cooldown claimed (the attempt counts, whatever refuses it next), the amount and fee from
   * the wallet, the amount onto the card, one transaction. A token's holder is resolved by the store.
   */
  topUp(who: Caller | TokenHolder, cardId: string, amount: Cents, now: Date, hooks: OperationHooks<TopupResult>): Promise<TopupResult>;

  /** Spec 4.7's first transaction: the cooldown claimed, the amount held off the card (a `Pending` line). */
  holdWithdrawal(request: WithdrawalRequest): Promise<WithdrawalHold>;
  /** Spec 4.7's last transaction, once the provider has withdrawn: the held amount onto the wallet. */
  settleWithdrawal(hold: WithdrawalHold, hooks: OperationHooks<WithdrawResult>): Promise<WithdrawResult>;

  /** A closure's first transaction: the cooldown shared with withdrawals claimed, the whole balance held. */
  holdClosure(request: ClosureRequest): Promise<ClosureHold>;
  /** A closure's last transaction, once the provider has terminated the card: the balance onto the wallet, the card closed. */
  settleClosure(hold: ClosureHold): Promise<CloseResult>;

  /** A creation's first transaction: the card written `processing`, the fee (less any coupon) held. */
  holdCreation(request: CreationRequest): Promise<CreationHold>;
  /** A creation's last transaction, once the provider has issued the card: the fee taken, the card `active`. */
  settleCreation(hold: CreationHold, issued: IssuedCard, hooks: OperationHooks<Card>): Promise<Card>;

  /**
   * An authorization decided in one transaction (`authorization/decision.ts`'s order, auto top-up before
   * funds): declined with a code (a `Declined` line), or approved and held (a `Pending` line, the amount in
   * `platform:authorized`), committed before the answer. Asked again by its provider transaction id: the first answer.
   */
  holdAuthorization(request: AuthorizationRequest): Promise<AuthorizationDecision>;
  /** A held authorization cleared: what the merchant takes to the merchants, the rest back onto the card. Idempotent. */
  clearAuthorization(request: ClearingRequest): Promise<ClearingResult>;
  /** A held authorization voided or expired: the hold back onto the card, its line `Reversed`. Idempotent. */
  releaseAuthorization(request: ReleaseRequest): Promise<ReleaseResult>;
}

/** What the provider and the settling need of the BIN a card is created on. */
export type IssuingBin = Pick<BinRow, 'bin' | 'country' | 'currency' | 'initial_balance'>;

export interface WithdrawalRequest {
  caller: Caller;
  cardId: string;
  amount: Cents;
  /** The pending operation's id (the `Pending` line's too). */
  operationId: string;
  now: Date;
}

export interface WithdrawalHold extends WithdrawalRequest {
  card: Pick<CardRow, 'id' | 'account_id' | 'provider_card_id'>;
}

export interface ClosureRequest {
  caller: Caller;
  cardId: string;
  operationId: string;
  now: Date;
  /**
   * A closure the system decides (a single-use card after its first clearing), not the cardholder: the
   * cooldown shared with withdrawals is neither checked nor claimed.
   */
  system?: boolean;
}

export interface ClosureHold extends ClosureRequest {
  card: Pick<CardRow, 'id' | 'account_id' | 'currency' | 'provider_card_id'>;
}

export interface CreationRequest {
  caller: Caller;
  input: CreateCardInput;
  /** The card's id, the pending operation's too. */
  cardId: string;
  now: Date;
}

export interface CreationHold extends CreationRequest {
  bin: IssuingBin;
}

/** What both stores are built from (`createCardService` hands them the core's own). */
export type MoneyStoreDeps = Pick<
  OperationDeps,
  'db' | 'settings' | 'cipher' | 'systemAccounts' | 'pending' | 'cooldowns' | 'authentication'
>;
