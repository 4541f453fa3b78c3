import { randomInt, randomUUID } from 'node:crypto';
import type { Clock } from '../../infra/clock.js';
import { luhnCheckDigit, maskPan } from './luhn.js';
import type { Cents } from '../ledger/money.js';
import type { CardType } from '../../db/schema.js';

export interface BillingAddress {
  city: string;
  line1: string;
  line2: string | null;
  state: string;
  country: string;
  postalCode: string;
}

export interface IssuedCard {
  /** The provider's id; absent while the provider is still issuing (the card then carries a temporary id). */
  providerCardId: string | null;
  pan: string;
  cvv: string;
  /** MM/YY */
  exp: string;
  address: BillingAddress;
  /**
   * Set when the provider keeps the number and code itself (`readDetails` reads them when asked): `pan` and
   * `cvv` are then `KEPT_BY_PROVIDER`, and the card row keeps only these last four digits of the number.
   */
  keptByProvider?: { lastFour: string };
}

/** What a card row seals in place of a number and code its provider keeps (a sealed value is never empty). */
export const KEPT_BY_PROVIDER = 'kept-by-provider';

/** What a card row shows of its number: the last four digits (`maskPan`), whoever keeps the number. */
export function maskedPanOf(issued: IssuedCard): string {
  return maskPan(issued.keptByProvider ? issued.keptByProvider.lastFour : issued.pan);
}

/** A card's number, code and expiry (MM/YY), as the provider that keeps them reads them out. */
export interface ProviderCardDetails {
  pan: string;
  cvv: string;
  exp: string;
}

/** What a card is issued for: the BIN and country it is issued under, its nickname, its type, and the core's id for it. */
export interface IssueRequest {
  bin: string;
  country: string;
  name: string;
  /** `multi_use` unless set. */
  type?: CardType;
  /** The core's id of the card being created: the provider's idempotency key (`reissue`). */
  reference?: string;
}

/** Raised by a provider that refused or failed; its message is shown to the user. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /** Whether the provider answered with a refusal (asked again, it would refuse again), not a failure to answer. */
  get refused(): boolean {
    return false;
  }
}

/**
 * What comes with every call: `signal` aborts once the core has given the call up (`withTimeout`,
 * src/core/provider/provider-timeout.ts), and a provider must not act on a call after that.
 */
export interface ProviderCallOptions {
  signal?: AbortSignal;
}

/**
 * The card provider: the one place cards really live. The core calls it outside any transaction, between
 * recording the operation and settling it (src/core/operations/pending-operations.ts), and gives a call up after
 * `PROVIDER_TIMEOUT_MS`.
 */
export interface CardProvider {
  issue(request: IssueRequest, options?: ProviderCallOptions): Promise<IssuedCard>;
  freeze(providerCardId: string, options?: ProviderCallOptions): Promise<void>;
  unfreeze(providerCardId: string, options?: ProviderCallOptions): Promise<void>;
  terminate(providerCardId: string, options?: ProviderCallOptions): Promise<void>;
  withdraw(providerCardId: string, amount: Cents, options?: ProviderCallOptions): Promise<void>;
  /** A provider that keeps cards' numbers (`IssuedCard.keptByProvider`) reads them here, each time they are asked for. */
  readDetails?(providerCardId: string, options?: ProviderCallOptions): Promise<ProviderCardDetails>;
  /**
   * A provider whose issue is idempotent by its `reference` (Lithic's `Idempotency-Key`): the same issue again
   * answers with the card the first one made, or makes it now. The recovery finishes a creation a crash left
   * pending with it (`askProviderFirst`); a refusal (`ProviderError.refused`) releases the creation.
   */
  reissue?(request: IssueRequest, options?: ProviderCallOptions): Promise<IssuedCard>;
  /**
   * A provider that keeps its cards' states: the card's, as the provider has it. The recovery asks it what
   * became of a closure a crash left pending (`askProviderFirst`).
   */
  stateOf?(providerCardId: string, options?: ProviderCallOptions): Promise<ProviderCardState>;
}

export type ProviderCardState = 'open' | 'paused' | 'closed';

export type ProviderOperation = 'issue' | 'freeze' | 'unfreeze' | 'terminate' | 'withdraw';

/** What the sandbox was asked to do, and whether it did (for tests and the operator's eyes). */
export interface ProviderCall {
  operation: ProviderOperation;
  providerCardId?: string;
  amount?: Cents;
  ok: boolean;
}

const REMEMBERED_CALLS = 1_000;

export interface SandboxProviderOptions {
  clock: Clock;
  /** When true, cards are issued without a provider id; the core gives them a temporary one. */
  issueAsynchronously?: boolean;
}

/**
 * The embedded sandbox: Luhn-valid PANs under the BIN, a CVV, expiry three years out, and a fixed
 * billing address per country. `failNext` makes the next call of an operation fail, for tests;
 * `calls` keeps the latest calls.
 */
export class SandboxCardProvider implements CardProvider {
  issueAsynchronously: boolean;
  readonly #clock: Clock;
  readonly #failures = new Map<ProviderOperation, string>();
  readonly calls: ProviderCall[] = [];

  constructor(options: SandboxProviderOptions) {
    this.#clock = options.clock;
    this.issueAsynchronously = options.issueAsynchronously ?? false;
  }

  failNext(operation: ProviderOperation, message: string): void {
    this.#failures.set(operation, message);
  }

  async issue(request: { bin: string; country: string }, options?: ProviderCallOptions): Promise<IssuedCard> {
    this.#record({ operation: 'issue' }, options);
    const partial = request.bin + Array.from({ length: 9 }, () => randomInt(10)).join('');
    const now = this.#clock.now();
    const month = String(now.getUTCMonth() + 1).padStart(2, '0');
    const year = String((now.getUTCFullYear() + 3) % 100).padStart(2, '0');
    return {
      providerCardId: this.issueAsynchronously ? null : `sbx_${randomUUID()}`,
      pan: partial + String(luhnCheckDigit(partial)),
      cvv: String(randomInt(1000)).padStart(3, '0'),
      exp: `${month}/${year}`,
      address: sandboxAddress(request.country),
    };
  }

  async freeze(providerCardId: string, options?: ProviderCallOptions): Promise<void> {
    this.#record({ operation: 'freeze', providerCardId }, options);
  }
  async unfreeze(providerCardId: string, options?: ProviderCallOptions): Promise<void> {
    this.#record({ operation: 'unfreeze', providerCardId }, options);
  }
  async terminate(providerCardId: string, options?: ProviderCallOptions): Promise<void> {
    this.#record({ operation: 'terminate', providerCardId }, options);
  }
  async withdraw(providerCardId: string, amount: Cents, options?: ProviderCallOptions): Promise<void> {
    this.#record({ operation: 'withdraw', providerCardId, amount }, options);
  }

  /** Records the call, failing it when `failNext` asked for that or the core has given it up already. */
  #record(call: Omit<ProviderCall, 'ok'>, options: ProviderCallOptions = {}): void {
    const message = options.signal?.aborted ? 'the call was given up before it was made' : this.#failures.get(call.operation);
    if (this.calls.length >= REMEMBERED_CALLS) this.calls.shift();
    this.calls.push({ ...call, ok: message === undefined });
    if (message === undefined) return;
    if (!options.signal?.aborted) this.#failures.delete(call.operation);
    throw new ProviderError(message);
  }
}

function sandboxAddress(country: string): BillingAddress {
  if (country === 'GB') {
    return { city: 'London', line1: '1 Sandbox Street', line2: null, state: 'London', country, postalCode: 'EC1A 1BB' };
  }
  return { city: 'San Francisco', line1: '100 Sandbox Avenue', line2: 'Suite 200', state: 'CA', country, postalCode: '94105' };
}
