import type { z } from 'zod';
import type { QuotedRefusal } from '../core/operations/views.js';
import { CardServiceError } from '../core/rules/errors.js';
import { toAmount, type Cents } from '../core/ledger/money.js';
import { type ExchangeDeps, get, read, send } from './exchange.js';
import { refusalOf, RemoteRefusal } from './refusals.js';
import { remoteStatusOf } from './service-errors.js';
import * as shapes from './shapes.js';

/**
 * What one user (one token) may do at the card service: the interface's requests (spec section 4), and the
 * extensions some services have, tried once and remembered as absent when the service does not know them.
 */

/** A capability beyond the interface: unknown until tried, then remembered for the client's life. */
type Capability = 'unknown' | 'present' | 'absent';

/** What a service may lack: the interface's extensions, and the OTP-e-mail request (4.14), which some services leave out. */
export type CapabilityName = 'listCards' | 'topupQuote' | 'otpRequest';

export type Capabilities = Record<CapabilityName, Capability>;

export const unknownCapabilities = (): Capabilities => ({ listCards: 'unknown', topupQuote: 'unknown', otpRequest: 'unknown' });

/** What a session needs: the exchange's settings and the client's capabilities as found so far. */
export interface SessionDeps extends ExchangeDeps {
  capabilities: Capabilities;
}

/**
 * The service does not have the extension: its route is not there (404, 405, 501), or the path was read as a
 * card id (`Card ID is required`). A quote for a card the service does not know is a real refusal; so is
 * any refusal of the OTP request in words we know (`No OTP found for this card` is often a 404).
 */
function isMissingExtension(name: CapabilityName, error: unknown): boolean {
  if (name === 'otpRequest' && error instanceof CardServiceError) return false;
  if (error instanceof CardServiceError && error.code === 'CARD_ID_REQUIRED') return true;
  if (name === 'topupQuote' && error instanceof CardServiceError && error.code === 'CARD_NOT_FOUND') return false;
  const status = remoteStatusOf(error);
  return status === 404 || status === 405 || status === 501;
}

/** Tries an extension once; a missing route marks it absent for good and answers undefined. */
async function extension<T>(capabilities: Capabilities, name: CapabilityName, run: () => Promise<T>): Promise<T | undefined> {
  if (capabilities[name] === 'absent') return undefined;
  try {
    const result = await run();
    capabilities[name] = 'present';
    return result;
  } catch (error) {
    if (!isMissingExtension(name, error)) throw error;
    capabilities[name] = 'absent';
    return undefined;
  }
}

/**
 * A card's path; an id that is not a UUID is refused as no card of the caller's, before any request: it
 * could climb out of the path (`..`), and the bot could not carry it in a button or a push anyway.
 */
const card = (id: string) => {
  if (!shapes.isCardId(id)) throw new CardServiceError('CARD_NOT_FOUND');
  return `/api/v1/cards/${id}`;
};

/** What one user (one token) may do at the service. */
export function session(deps: SessionDeps, token: string) {
  const { capabilities } = deps;
  return {
    /** Spec 4.1: also the token test (a refused token throws `INVALID_TOKEN`), in the caller's lane. */
    health: () => get(deps, token, { path: '/api/v1/health', shape: shapes.health }),
    /**
     * The check of a token sent to link a chat (spec 4.1's health check): the one request a stranger can
     * cause, so it takes the budget's small link lane (a full lane refuses it at once) and a 429 is not
     * tried again; both throw `ServiceBusyError`.
     */
    checkToken: () => get(deps, token, { path: '/api/v1/health', shape: shapes.health, lane: 'link' }),
    listBins: () => get(deps, token, { path: '/api/v1/bins', shape: shapes.binList }),
    listPlans: () => get(deps, token, { path: '/api/v1/card-plans', shape: shapes.planList }),
    /** The extension `GET /api/v1/cards`; undefined when the service has no listing. */
    listCards: () => extension(capabilities, 'listCards', () => get(deps, token, { path: '/api/v1/cards', shape: shapes.cardList })),
    getCard: async (id: string) => get(deps, token, { path: card(id), shape: shapes.card }),
    createCard: (input: { binId: string; name: string; planId: number; couponId?: string }) =>
      send(deps, token, {
        method: 'POST',
        path: '/api/v1/cards',
        body: { bin_id: input.binId, name: input.name, planId: input.planId, ...(input.couponId ? { coupon_id: input.couponId } : {}) },
        shape: shapes.createdCard,
      }),
    /**
     * The extension top-up quote; undefined when the service has none (the fee is then known only after).
     * A read: it changes nothing and counts as no attempt, so it is retried like a GET. The refusal it
     * names is read back into our codes as a refusal of the top-up would be.
     */
    quoteTopup: async (id: string, amount: Cents): Promise<TopupQuote | undefined> => {
      const path = `${card(id)}/topup/quote`;
      const quote = await extension(capabilities, 'topupQuote', () =>
        read(deps, token, { method: 'POST', path, body: { amount: toAmount(amount) }, shape: shapes.topupQuote }),
      );
      if (quote === undefined) return undefined;
      const { refusalText, ...figures } = quote;
      return refusalText === undefined ? figures : { ...figures, refusal: quotedRefusalOf(refusalText, amount) };
    },
    topup: async (id: string, amount: Cents) =>
      send(deps, token, {
        method: 'POST',
        path: `${card(id)}/topup`,
        body: { amount: toAmount(amount) },
        shape: shapes.topup,
        context: { amount },
      }),
    withdraw: async (id: string, amount: Cents) =>
      send(deps, token, {
        method: 'POST',
        path: `${card(id)}/withdraw`,
        body: { amount: toAmount(amount) },
        shape: shapes.withdrawal,
        context: { amount },
      }),
    freeze: async (id: string) => send(deps, token, { method: 'PATCH', path: `${card(id)}/freeze`, shape: shapes.statusChange }),
    unfreeze: async (id: string) => send(deps, token, { method: 'PATCH', path: `${card(id)}/unfreeze`, shape: shapes.statusChange }),
    close: async (id: string) => send(deps, token, { method: 'PATCH', path: `${card(id)}/close`, shape: shapes.closed }),
    /** Spec 4.10: card data. Never logged, never stored. */
    details: async (id: string) => get(deps, token, { path: `${card(id)}/details`, shape: shapes.sensitiveDetails }),
    listTransactions: async (query: { page?: number; limit?: number; cardId?: string } = {}) => {
      if (query.cardId !== undefined && !shapes.isCardId(query.cardId)) throw new CardServiceError('CARD_NOT_FOUND');
      const params = new URLSearchParams();
      if (query.page !== undefined) params.set('page', String(query.page));
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.cardId !== undefined) params.set('card_id', query.cardId);
      const search = params.size > 0 ? `?${params}` : '';
      return get(deps, token, { path: `/api/v1/cards/transactions${search}`, shape: shapes.transactionPage });
    },
    listOtps: async (id: string) => get(deps, token, { path: `${card(id)}/otps`, shape: shapes.otpList }),
    /** Spec 4.14, detected like an extension: undefined when the service has no such route. */
    requestOtp: async (id: string) => {
      const path = `${card(id)}/otps/request`;
      return extension(capabilities, 'otpRequest', () => send(deps, token, { method: 'POST', path, shape: shapes.requestedOtp }));
    },
    walletBalance: () => get(deps, token, { path: '/api/v1/wallet/balance', shape: shapes.wallet }),
  };
}

/** A quote's refusal text as a refusal of ours (section 7's texts, with their figures), or the service's own words. */
function quotedRefusalOf(text: string, amount: Cents): QuotedRefusal {
  const refusal = refusalOf({ message: text }, 200, { amount });
  return (refusal instanceof RemoteRefusal ? new CardServiceError('SERVICE_REFUSED', { text: refusal.message }) : refusal).toPlain();
}

/** What the top-up quote tells: the fee, and from a service that says them the figures and the refusal the top-up would meet. */
export type TopupQuote = Omit<z.output<typeof shapes.topupQuote>, 'refusalText'> & { refusal?: QuotedRefusal };
