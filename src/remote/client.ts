import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import type { z } from 'zod';
import type { QuotedRefusal } from '../core/operations/views.js';
import { CardServiceError } from '../core/rules/errors.js';
import { toAmount, type Cents } from '../core/ledger/money.js';
import { type Lane, type ScheduleOptions, ServiceBusyError } from './budget.js';
import { refusalOf, RemoteRefusal, type RefusalContext } from './refusals.js';
import * as shapes from './shapes.js';

export { ServiceBusyError } from './budget.js';

/**
 * An HTTP client of a card service that speaks the interface (`/api/v1`, spec section 4), one token per
 * user. It promises nothing the interface does not: the extensions some services have (listing cards, a
 * top-up quote) are tried once and remembered as absent when the service does not know them.
 *
 * GETs are retried with back-off (429 with `Retry-After`, 5xx, a dropped connection); a POST or PATCH is
 * sent once: after a timeout or a lost answer its outcome is not known (`OutcomeUnknownError`), and the
 * caller reads the state again rather than repeating a money movement.
 *
 * The service is not trusted to be kind: an answer is read up to `maxAnswerBytes` and no further, its lists
 * up to their maximum (shapes.ts), no redirect is followed (a 3xx is a failure: a request and its body are
 * never sent to another host), and a card id is a UUID both ways, in what the service answers and in
 * what the client is asked to use (anything else is refused before a request is made). The request timeout
 * covers the wait for a turn in the request budget as well as the exchange.
 */

/** The service did not answer usefully (down, too slow, 5xx, or an answer we cannot read). Nothing is known to have happened. */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
  constructor(
    message: string,
    readonly status?: number,
    /** From a 429's or 503's `Retry-After`. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The HTTP status a refusal came with (refusals are our own errors, which carry none). */
const refusalStatus = new WeakMap<Error, number>();

/** The HTTP status of a refusal or an unavailable service, when it answered at all. */
export function remoteStatusOf(error: unknown): number | undefined {
  if (error instanceof ServiceUnavailableError) return error.status;
  return error instanceof Error ? refusalStatus.get(error) : undefined;
}

/** A POST or PATCH was sent and no answer came back: it may or may not have been carried out. */
export class OutcomeUnknownError extends Error {
  override readonly name = 'OutcomeUnknownError';
}

export interface RemoteClientOptions {
  /** The spec's `{base_url}`: paths begin with `/api/v1` under it. */
  baseUrl: string;
  /** How long one request may take before it is given up. */
  timeoutMs: number;
  /** Node's fetch by default. */
  fetch?: typeof fetch;
  /**
   * Waits for a turn before each request (the service-wide request budget); at once by default. Given the
   * request's timeout signal (a request still waiting when it fires is never sent) and, for a link check,
   * its lane.
   */
  schedule?: <T>(call: () => Promise<T>, options?: ScheduleOptions) => Promise<T>;
  /** Retries of a GET after the first try. 2 by default. */
  getRetries?: number;
  /** The first back-off between GET tries, ms (doubling). 200 by default. */
  retryDelayMs?: number;
  /** Told of each exchange: the service answered (a refusal too), or it did not (down, slow, 5xx, unreadable). */
  observe?: { answered(): void; unavailable(error: Error): void };
  /** The largest answer read, in bytes; a longer one is abandoned as unreadable. 1 MiB by default. */
  maxAnswerBytes?: number;
}

/** The largest answer read by default: far above any page of the interface. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

type Method = 'GET' | 'POST' | 'PATCH';

/** Nothing was sent: the request had no turn in the request budget before its timeout. Not retried: its time is spent. */
const neverSent = new WeakSet<Error>();

interface Call<T> {
  method: Method;
  path: string;
  body?: unknown;
  shape: z.ZodType<T>;
  context?: RefusalContext;
  /** A POST that changes nothing (the top-up quote): retried like a GET, and a lost answer means only "unavailable". */
  read?: boolean;
  /** The budget's lane for this request, when not the one the caller runs in (a link check's). */
  lane?: Lane;
}

/** A capability beyond the interface: unknown until tried, then remembered for the client's life. */
type Capability = 'unknown' | 'present' | 'absent';

/** What a service may lack: the interface's extensions, and the OTP-e-mail request (4.14), which some services leave out. */
type CapabilityName = 'listCards' | 'topupQuote' | 'otpRequest';

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

export function createRemoteCardClient(options: RemoteClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fetchFn = options.fetch ?? fetch;
  const schedule = options.schedule ?? (<T>(call: () => Promise<T>) => call());
  const maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const capabilities: Record<CapabilityName, Capability> = { listCards: 'unknown', topupQuote: 'unknown', otpRequest: 'unknown' };

  /** One exchange, told to `observe`: whether the service answered. */
  async function exchange<T>(token: string, call: Call<T>, idempotencyKey?: string): Promise<{ data: T; status: number }> {
    try {
      const result = await exchangeOnce(token, call, idempotencyKey);
      options.observe?.answered();
      return result;
    } catch (error) {
      // A request the budget never let out tells nothing of the service.
      if (error instanceof ServiceBusyError && error.status === undefined) throw error;
      if (error instanceof Error && neverSent.has(error)) throw error;
      if (error instanceof ServiceUnavailableError || error instanceof OutcomeUnknownError) options.observe?.unavailable(error);
      else options.observe?.answered();
      throw error;
    }
  }

  /** One exchange: the parsed `data` of a success, else the refusal (thrown). */
  async function exchangeOnce<T>(token: string, call: Call<T>, idempotencyKey?: string): Promise<{ data: T; status: number }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    // One deadline for the wait in the budget, the request and the reading of its answer.
    const signal = AbortSignal.timeout(options.timeoutMs);
    let sent = false;
    let response: Response;
    try {
      response = await schedule(
        () => {
          sent = true;
          return fetchFn(`${base}${call.path}`, {
            method: call.method,
            headers,
            signal,
            // A redirect is not followed: the request (and its body, its token) goes to the service and nowhere else.
            redirect: 'manual',
            ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
          });
        },
        { signal, ...(call.lane ? { lane: call.lane } : {}) } satisfies ScheduleOptions,
      );
    } catch (error) {
      if (error instanceof ServiceBusyError) throw error;
      if (!sent) {
        const unsent = new ServiceUnavailableError('the card service was not asked: no turn in the request budget in time');
        neverSent.add(unsent);
        throw unsent;
      }
      throw lostExchange(call, error);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new ServiceUnavailableError(`the card service answered HTTP ${response.status} (a redirect, not followed)`, response.status);
    }
    let body: unknown;
    try {
      body = JSON.parse(await answerText(response, maxAnswerBytes));
    } catch (error) {
      if ((error as Error)?.name === 'TimeoutError' || (error as Error)?.name === 'AbortError') throw lostExchange(call, error);
      const what = error instanceof AnswerTooLarge ? `an answer over ${maxAnswerBytes} bytes` : 'without JSON';
      throw unreadable(call, response.status, `the card service answered HTTP ${response.status} ${what}`);
    }
    const envelope = shapes.envelope.safeParse(body);
    if (!envelope.success)
      throw unreadable(call, response.status, `the card service answered HTTP ${response.status} outside the envelope`);
    const { success, data } = envelope.data;
    if (!success || !response.ok) {
      const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
      const retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
      // A busy or failing service, unless it says why in words we know (a cooldown is often a 429).
      const refusal = refusalOf(envelope.data, response.status, {
        ...call.context,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
      // A link check the service is too busy for is not tried again: the user is told to, shortly.
      if (refusal instanceof RemoteRefusal && response.status === 429 && call.lane === 'link')
        throw new ServiceBusyError('the card service is busy (HTTP 429)', 429);
      if (refusal instanceof RemoteRefusal && (response.status >= 500 || response.status === 429)) {
        throw new ServiceUnavailableError(
          `the card service answered HTTP ${response.status}`,
          response.status,
          retryAfterSeconds === undefined ? undefined : retryAfterSeconds * 1000,
        );
      }
      refusalStatus.set(refusal, response.status);
      throw refusal;
    }
    const parsed = call.shape.safeParse(data);
    if (!parsed.success)
      throw unreadable(call, response.status, `the card service's answer to ${call.method} ${routeOf(call.path)} has an unknown shape`);
    return { data: parsed.data, status: response.status };
  }

  /**
   * An answer that cannot be read. For a read, or a failure status, nothing is known to have happened; a POST
   * or PATCH the service said it carried out (2xx) may have been, whatever its answer holds.
   */
  function unreadable(call: Pick<Call<unknown>, 'method' | 'read'>, status: number, message: string): Error {
    if (call.method !== 'GET' && call.read !== true && status >= 200 && status < 300)
      return new OutcomeUnknownError(`${message}; the outcome is not known`);
    return new ServiceUnavailableError(message, status);
  }

  /** A request that failed in transport: a read is safe to call unavailable; a POST or PATCH may have been carried out. */
  function lostExchange(call: Pick<Call<unknown>, 'method' | 'read'>, error: unknown): Error {
    const cause = (error as { cause?: { code?: string } })?.cause?.code;
    // A read changes nothing, and a request refused before anything was sent cannot have done anything.
    if (call.method === 'GET' || call.read === true || cause === 'ECONNREFUSED' || cause === 'ENOTFOUND') {
      return new ServiceUnavailableError(
        (error as Error)?.name === 'TimeoutError' ? 'the card service did not answer in time' : 'the card service could not be reached',
      );
    }
    return new OutcomeUnknownError('the card service did not answer; the outcome is not known');
  }

  async function get<T>(token: string, call: Omit<Call<T>, 'method'>): Promise<T> {
    return read(token, { ...call, method: 'GET' });
  }

  /** A request that changes nothing (a GET, or the quote's POST), retried with back-off while the service is busy or failing. */
  async function read<T>(token: string, call: Call<T>): Promise<T> {
    return pRetry(async () => (await exchange(token, { ...call, read: true })).data, {
      retries: options.getRetries ?? 2,
      minTimeout: options.retryDelayMs ?? 200,
      factor: 2,
      randomize: true,
      // Only what a later try may change: a refusal, or an answer we cannot read, stays as it is.
      shouldRetry: ({ error }) =>
        error instanceof ServiceUnavailableError &&
        !neverSent.has(error) &&
        (error.status === undefined || error.status >= 500 || error.status === 429),
      // A service that says when to come back is believed, up to the request timeout; after the last try
      // the error goes to the caller at once (p-retry calls this before it knows whether it tries again).
      onFailedAttempt: async ({ error, retriesLeft }) => {
        if (retriesLeft > 0 && error instanceof ServiceUnavailableError && error.retryAfterMs !== undefined)
          await sleep(Math.min(error.retryAfterMs, options.timeoutMs));
      },
    });
  }

  /** A POST or PATCH, sent once, with an `Idempotency-Key` a service may honour. */
  async function send<T>(token: string, call: Call<T>): Promise<T> {
    return (await exchange(token, call, randomUUID())).data;
  }

  /** Tries an extension once; a missing route marks it absent for good and answers undefined. */
  async function extension<T>(name: keyof typeof capabilities, run: () => Promise<T>): Promise<T | undefined> {
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
  function as(token: string) {
    return {
      /** Spec 4.1: also the token test (a refused token throws `INVALID_TOKEN`), in the caller's lane. */
      health: () => get(token, { path: '/api/v1/health', shape: shapes.health }),
      /**
       * The check of a token sent to link a chat (spec 4.1's health check): the one request a stranger can
       * cause, so it takes the budget's small link lane (a full lane refuses it at once) and a 429 is not
       * tried again; both throw `ServiceBusyError`.
       */
      checkToken: () => get(token, { path: '/api/v1/health', shape: shapes.health, lane: 'link' }),
      listBins: () => get(token, { path: '/api/v1/bins', shape: shapes.binList }),
      listPlans: () => get(token, { path: '/api/v1/card-plans', shape: shapes.planList }),
      /** The extension `GET /api/v1/cards`; undefined when the service has no listing. */
      listCards: () => extension('listCards', () => get(token, { path: '/api/v1/cards', shape: shapes.cardList })),
      getCard: async (id: string) => get(token, { path: card(id), shape: shapes.card }),
      createCard: (input: { binId: string; name: string; planId: number; couponId?: string }) =>
        send(token, {
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
        const quote = await extension('topupQuote', () =>
          read(token, { method: 'POST', path, body: { amount: toAmount(amount) }, shape: shapes.topupQuote }),
        );
        if (quote === undefined) return undefined;
        const { refusalText, ...figures } = quote;
        return refusalText === undefined ? figures : { ...figures, refusal: quotedRefusalOf(refusalText, amount) };
      },
      topup: async (id: string, amount: Cents) =>
        send(token, {
          method: 'POST',
          path: `${card(id)}/topup`,
          body: { amount: toAmount(amount) },
          shape: shapes.topup,
          context: { amount },
        }),
      withdraw: async (id: string, amount: Cents) =>
        send(token, {
          method: 'POST',
          path: `${card(id)}/withdraw`,
          body: { amount: toAmount(amount) },
          shape: shapes.withdrawal,
          context: { amount },
        }),
      freeze: async (id: string) => send(token, { method: 'PATCH', path: `${card(id)}/freeze`, shape: shapes.statusChange }),
      unfreeze: async (id: string) => send(token, { method: 'PATCH', path: `${card(id)}/unfreeze`, shape: shapes.statusChange }),
      close: async (id: string) => send(token, { method: 'PATCH', path: `${card(id)}/close`, shape: shapes.closed }),
      /** Spec 4.10: card data. Never logged, never stored. */
      details: async (id: string) => get(token, { path: `${card(id)}/details`, shape: shapes.sensitiveDetails }),
      listTransactions: async (query: { page?: number; limit?: number; cardId?: string } = {}) => {
        if (query.cardId !== undefined && !shapes.isCardId(query.cardId)) throw new CardServiceError('CARD_NOT_FOUND');
        const params = new URLSearchParams();
        if (query.page !== undefined) params.set('page', String(query.page));
        if (query.limit !== undefined) params.set('limit', String(query.limit));
        if (query.cardId !== undefined) params.set('card_id', query.cardId);
        const search = params.size > 0 ? `?${params}` : '';
        return get(token, { path: `/api/v1/cards/transactions${search}`, shape: shapes.transactionPage });
      },
      listOtps: async (id: string) => get(token, { path: `${card(id)}/otps`, shape: shapes.otpList }),
      /** Spec 4.14, detected like an extension: undefined when the service has no such route. */
      requestOtp: async (id: string) => {
        const path = `${card(id)}/otps/request`;
        return extension('otpRequest', () => send(token, { method: 'POST', path, shape: shapes.requestedOtp }));
      },
      walletBalance: () => get(token, { path: '/api/v1/wallet/balance', shape: shapes.wallet }),
    };
  }

  return { as, capabilities: (): Readonly<typeof capabilities> => ({ ...capabilities }) };
}

/** A quote's refusal text as a refusal of ours (section 7's texts, with their figures), or the service's own words. */
function quotedRefusalOf(text: string, amount: Cents): QuotedRefusal {
  const refusal = refusalOf({ message: text }, 200, { amount });
  return (refusal instanceof RemoteRefusal ? new CardServiceError('SERVICE_REFUSED', { text: refusal.message }) : refusal).toPlain();
}

/** What the top-up quote tells: the fee, and from a service that says them the figures and the refusal the top-up would meet. */
export type TopupQuote = Omit<z.output<typeof shapes.topupQuote>, 'refusalText'> & { refusal?: QuotedRefusal };

/** A path without its ids, for a log line or an error that must not carry one. */
function routeOf(path: string): string {
  return path.replace(/\?.*$/, '').replace(/\/cards\/(?!transactions)[^/]+/, '/cards/{id}');
}

export type RemoteCardClient = ReturnType<typeof createRemoteCardClient>;
export type RemoteSession = ReturnType<RemoteCardClient['as']>;

/** The answer was longer than the client reads. */
class AnswerTooLarge extends Error {
  override readonly name = 'AnswerTooLarge';
}

/**
 * The answer's text, read as it streams in and abandoned (its connection closed) once it passes `maxBytes`:
 * a service cannot make the bot hold more than that of one answer, whatever its `Content-Length` says.
 */
async function answerText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AnswerTooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLarge();
    }
    chunks.push(value);
  }
  // As `response.text()` reads it: UTF-8, a byte-order mark dropped.
  return new TextDecoder().decode(Buffer.concat(chunks, length));
}
