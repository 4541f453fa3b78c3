import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import type { z } from 'zod';
import { type Lane, type ScheduleOptions, ServiceBusyError } from './budget.js';
import { type RefusalContext, RemoteRefusal, refusalOf } from './refusals.js';
import { OutcomeUnknownError, refusalStatus, ServiceUnavailableError } from './service-errors.js';
import * as shapes from './shapes.js';

/**
 * One request to the card service and its answer, for the client (client.ts): the wait for a turn in the
 * request budget, the exchange under one deadline, the answer read up to a size and parsed into its shape,
 * a refusal read back into our codes; GETs retried, a POST or PATCH sent once.
 */

/** What an exchange needs: the client's settings, defaults applied. */
export interface ExchangeDeps {
  /** The spec's `{base_url}`, without a trailing slash. */
  base: string;
  fetch: typeof fetch;
  schedule: <T>(call: () => Promise<T>, options?: ScheduleOptions) => Promise<T>;
  timeoutMs: number;
  maxAnswerBytes: number;
  getRetries: number;
  retryDelayMs: number;
  observe?: { answered(): void; unavailable(error: Error): void };
}

type Method = 'GET' | 'POST' | 'PATCH';

/** Nothing was sent: the request had no turn in the request budget before its timeout. Not retried: its time is spent. */
const neverSent = new WeakSet<Error>();

export interface Call<T> {
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

/** A GET, retried as `read` says. */
export async function get<T>(deps: ExchangeDeps, token: string, call: Omit<Call<T>, 'method'>): Promise<T> {
  return read(deps, token, { ...call, method: 'GET' });
}

/** A request that changes nothing (a GET, or the quote's POST), retried with back-off while the service is busy or failing. */
export async function read<T>(deps: ExchangeDeps, token: string, call: Call<T>): Promise<T> {
  return pRetry(async () => (await exchange(deps, token, { ...call, read: true })).data, {
    retries: deps.getRetries,
    minTimeout: deps.retryDelayMs,
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
        await sleep(Math.min(error.retryAfterMs, deps.timeoutMs));
    },
  });
}

/** A POST or PATCH, sent once, with an `Idempotency-Key` a service may honour. */
export async function send<T>(deps: ExchangeDeps, token: string, call: Call<T>): Promise<T> {
  return (await exchange(deps, token, call, randomUUID())).data;
}

/** One exchange, told to `observe`: whether the service answered. */
async function exchange<T>(
  deps: ExchangeDeps,
  token: string,
  call: Call<T>,
  idempotencyKey?: string,
): Promise<{ data: T; status: number }> {
  try {
    const result = await exchangeOnce(deps, token, call, idempotencyKey);
    deps.observe?.answered();
    return result;
  } catch (error) {
    // A request the budget never let out tells nothing of the service.
    if (error instanceof ServiceBusyError && error.status === undefined) throw error;
    if (error instanceof Error && neverSent.has(error)) throw error;
    if (error instanceof ServiceUnavailableError || error instanceof OutcomeUnknownError) deps.observe?.unavailable(error);
    else deps.observe?.answered();
    throw error;
  }
}

/** One exchange: the parsed `data` of a success, else the refusal (thrown). */
async function exchangeOnce<T>(
  deps: ExchangeDeps,
  token: string,
  call: Call<T>,
  idempotencyKey?: string,
): Promise<{ data: T; status: number }> {
  const { maxAnswerBytes } = deps;
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  // One deadline for the wait in the budget, the request and the reading of its answer.
  const signal = AbortSignal.timeout(deps.timeoutMs);
  let sent = false;
  let response: Response;
  try {
    response = await deps.schedule(
      () => {
        sent = true;
        return deps.fetch(`${deps.base}${call.path}`, {
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
  if (!envelope.success) throw unreadable(call, response.status, `the card service answered HTTP ${response.status} outside the envelope`);
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

/** A path without its ids, for a log line or an error that must not carry one. */
function routeOf(path: string): string {
  return path.replace(/\?.*$/, '').replace(/\/cards\/(?!transactions)[^/]+/, '/cards/{id}');
}

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
