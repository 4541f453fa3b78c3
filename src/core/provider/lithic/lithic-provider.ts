import { z } from 'zod';
import type { CardType } from '../../../db/schema.js';
import type { Cents } from '../../ledger/money.js';
import {
  type CardProvider,
  type IssuedCard,
  type IssueRequest,
  KEPT_BY_PROVIDER,
  type PendingIssue,
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

const cardList = z.object({ data: z.array(lithicCard), has_more: z.boolean() });

/** Our card types as Lithic's: a multi-use card is Lithic's `VIRTUAL`. */
export const LITHIC_CARD_TYPES = {
  multi_use: 'VIRTUAL',
  single_use: 'SINGLE_USE',
  merchant_locked: 'MERCHANT_LOCKED',
} as const satisfies Record<CardType, string>;

/** How far around a pending creation's time `issuedFor` looks for the card Lithic may have made for it. */
const ISSUE_WINDOW_BEFORE_MS = 60_000;
const ISSUE_WINDOW_AFTER_MS = 10 * 60_000;

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
    const card = await this.#client.request({
      method: 'POST',
      path: '/v1/cards',
      body: { type: LITHIC_CARD_TYPES[request.type ?? 'multi_use'], memo: request.name, state: 'OPEN' },
      ...(request.reference === undefined ? {} : { idempotencyKey: request.reference }),
      signal: options.signal,
      answer: lithicCard,
    });
    return issuedOf(card, request.country);
  }

  /** `GET /v1/cards/{card_token}`: a card Lithic made for a creation a crash left pending, as `issue` gives it. */
  async issuedCard(providerCardId: string, country: string, options: ProviderCallOptions = {}): Promise<IssuedCard> {
    return issuedOf(await this.#card(providerCardId, options), country);
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

  /**
   * The cards Lithic made for a creation a crash left pending: `GET /v1/cards` with its memo, around the
   * time it was recorded (Lithic's memo search is partial: the memo must match whole).
   */
  async issuedFor(pending: PendingIssue, options: ProviderCallOptions = {}): Promise<string[]> {
    const at = Date.parse(pending.at);
    const found: string[] = [];
    let startingAfter: string | undefined;
    do {
      const page = await this.#client.request({
        method: 'GET',
        path: '/v1/cards',
        query: {
          memo: pending.name,
          begin: new Date(at - ISSUE_WINDOW_BEFORE_MS).toISOString(),
          end: new Date(at + ISSUE_WINDOW_AFTER_MS).toISOString(),
          page_size: 100,
          starting_after: startingAfter,
        },
        signal: options.signal,
        answer: cardList,
      });
      for (const card of page.data) if (card.memo === pending.name && card.state !== 'CLOSED') found.push(card.token);
      startingAfter = page.has_more ? page.data.at(-1)?.token : undefined;
    } while (startingAfter !== undefined);
    return found;
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
