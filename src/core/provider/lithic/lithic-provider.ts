import { z } from 'zod';
import type { CardType } from '../../../db/schema.js';
import type { Cents } from '../../ledger/money.js';
import {
  type CardProvider,
  type IssuedCard,
  type IssueRequest,
  KEPT_BY_PROVIDER,
  type ProviderCallOptions,
  type ProviderCardState,
  type ProviderCardDetails,
  ProviderError,
} from '../provider.js';
import { LithicApiError, type LithicClient } from './lithic-client.js';

/** What the adapter reads of Lithic's card (`non_pci_card_response`, and `pan`/`cvv` when the key may see them). */
export const lithicCard = z.object({
  token: z.string().min(1),
  // The document's last_four: any four characters (no pattern).
  last_four: z.string().length(4),
  state: z.string(),
  type: z.string(),
  memo: z.string().nullish(),
  created: z.string().optional(),
  exp_month: z.string().optional(),
  exp_year: z.string().optional(),
  pan: z.string().optional(),
  cvv: z.string().optional(),
});
export type LithicCard = z.infer<typeof lithicCard>;

/** Our card types as Lithic's: a multi-use card is Lithic's `VIRTUAL`. */
export const LITHIC_CARD_TYPES = {
  multi_use: 'VIRTUAL',
  single_use: 'SINGLE_USE',
  merchant_locked: 'MERCHANT_LOCKED',
} as const satisfies Record<CardType, string>;

/**
 * Cards issued by Lithic (docs/lithic.md). The card's provider id is Lithic's card token; its number and code
 * stay at Lithic and are read from it each time they are asked for (`readDetails`), never stored here.
 * The money model does not change: cards are prepaid from our ledger, every authorization is decided by us
 * (Auth Stream Access), and Lithic's program account funds the network, so no money moves at Lithic for a
 * top-up or a withdrawal.
 */
export class LithicCardProvider implements CardProvider {
  readonly #client: LithicClient;

  constructor(client: LithicClient) {
    this.#client = client;
  }

  /** `POST /v1/cards`, the nickname as its memo, the core's id for the card as the `Idempotency-Key` (so it may be repeated). */
  async issue(request: IssueRequest, options: ProviderCallOptions = {}): Promise<IssuedCard> {
    return issuedOf(await this.#post(request, options), request.country);
  }

  #post(request: IssueRequest, options: ProviderCallOptions): Promise<LithicCard> {
    return this.#client.request({
      method: 'POST',
      path: '/v1/cards',
      body: { type: LITHIC_CARD_TYPES[request.type ?? 'multi_use'], memo: request.name, state: 'OPEN' },
      ...(request.reference === undefined ? {} : { idempotencyKey: request.reference }),
      signal: options.signal,
      answer: lithicCard,
    });
  }

  /**
   * The creation again, with the same `Idempotency-Key` (the card's id): Lithic answers with the card the first
   * `POST /v1/cards` made, or makes it now. A card Lithic has closed meanwhile is refused: the creation is released.
   */
  async reissue(request: IssueRequest, options: ProviderCallOptions = {}): Promise<IssuedCard> {
    const card = await this.#post(request, options);
    if (card.state === 'CLOSED') throw new LithicApiError(410, 'Lithic closed the card made for this creation');
    return issuedOf(card, request.country);
  }

  freeze(providerCardId: string, options?: ProviderCallOptions): Promise<void> {
    return this.#setState(providerCardId, 'PAUSED', options);
  }

  unfreeze(providerCardId: string, options?: ProviderCallOptions): Promise<void> {
    return this.#setState(providerCardId, 'OPEN', options);
  }

  /** `CLOSED` is final at Lithic; a card it refuses to close because it is closed already counts as closed (a repeated close). */
  async terminate(providerCardId: string, options: ProviderCallOptions = {}): Promise<void> {
    try {
      await this.#setState(providerCardId, 'CLOSED', options);
    } catch (error) {
      if (!(error instanceof LithicApiError) || error.status >= 500) throw error;
      if ((await this.#card(providerCardId, options)).state !== 'CLOSED') throw error;
    }
  }

  /**
   * Nothing to do at Lithic: the card's balance is ours (the ledger), not Lithic's, which only sees
   * authorizations we approve. A withdrawal moves money inside our ledger alone.
   */
  async withdraw(_providerCardId: string, _amount: Cents, options: ProviderCallOptions = {}): Promise<void> {
    if (options.signal?.aborted) throw new ProviderError('the call was given up before it was made');
  }

  /** `GET /v1/cards/{card_token}`, which shows `pan` and `cvv` to a key Lithic has allowed to see them. */
  async readDetails(providerCardId: string, options: ProviderCallOptions = {}): Promise<ProviderCardDetails> {
    const card = await this.#card(providerCardId, options);
    if (card.pan === undefined || card.cvv === undefined) {
      throw new ProviderError("Lithic does not show this API key the card's number (ask Lithic for PCI access)");
    }
    return { pan: card.pan, cvv: card.cvv, exp: expiryOf(card) };
  }

  /** `GET /v1/cards/{card_token}`: Lithic's `state`, a card not yet usable (`PENDING_*`) counted open. */
  async stateOf(providerCardId: string, options: ProviderCallOptions = {}): Promise<ProviderCardState> {
    const { state } = await this.#card(providerCardId, options);
    return state === 'CLOSED' ? 'closed' : state === 'PAUSED' ? 'paused' : 'open';
  }

  async #setState(providerCardId: string, state: 'OPEN' | 'PAUSED' | 'CLOSED', options: ProviderCallOptions = {}): Promise<void> {
    await this.#client.request({
      method: 'PATCH',
      path: `/v1/cards/${encodeURIComponent(providerCardId)}`,
      body: { state },
      signal: options.signal,
      answer: lithicCard,
    });
  }

  #card(providerCardId: string, options: ProviderCallOptions): Promise<LithicCard> {
    return this.#client.request({
      method: 'GET',
      path: `/v1/cards/${encodeURIComponent(providerCardId)}`,
      signal: options.signal,
      answer: lithicCard,
    });
  }
}

/** Lithic's card as the core keeps an issued one: its token, expiry and last four; its number and code stay Lithic's. */
function issuedOf(card: LithicCard, country: string): IssuedCard {
  return {
    providerCardId: card.token,
    // Whatever Lithic sent of the number and code is dropped here: they stay Lithic's (`readDetails`).
    pan: KEPT_BY_PROVIDER,
    cvv: KEPT_BY_PROVIDER,
    exp: expiryOf(card),
    // Lithic keeps billing addresses on the account holder, not the card: the card shows its country only.
    address: { city: '', line1: '', line2: null, state: '', country, postalCode: '' },
    keptByProvider: { lastFour: card.last_four },
  };
}

/** Lithic's `exp_month` (MM) and `exp_year` (YYYY) as MM/YY. */
function expiryOf(card: LithicCard): string {
  if (card.exp_month === undefined || card.exp_year === undefined) return '';
  return `${card.exp_month.padStart(2, '0')}/${card.exp_year.slice(-2)}`;
}
