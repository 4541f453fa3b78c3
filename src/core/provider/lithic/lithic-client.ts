import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { ProviderError } from '../provider.js';

/** Lithic's sandbox: where `LITHIC_API_URL` points unless set (https://api.lithic.com is live). */
export const LITHIC_SANDBOX_URL = 'https://sandbox.lithic.com';

export interface LithicClientOptions {
  /** Sent as the `Authorization` header, as Lithic's document says (`ApiKeyAuth`); never logged nor put in an error. */
  apiKey: string;
  baseUrl?: string;
  /** Each attempt is given up after this long (the core's `PROVIDER_TIMEOUT_MS` bounds the whole call besides). */
  timeoutMs: number;
  /** Attempts after the first for a call safe to repeat (default 2). */
  retries?: number;
  fetch?: typeof fetch;
}

export interface LithicRequest<T> {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Lithic's `Idempotency-Key` (a UUID), for the POSTs its document gives one: with it a POST may be repeated. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** What the answer must look like; a body that does not is a provider failure. */
  answer: z.ZodType<T>;
}

/** A call Lithic answered with an error status: `status` tells a refusal (4xx) from a failure (5xx). */
export class LithicApiError extends ProviderError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /**
   * A 4XX about the request itself: Lithic refused it, and would again. Not one worth another attempt
   * (`RETRIED_STATUSES`), nor a key refused (401, 403: a key rotated or revoked says nothing about the request).
   */
  override get refused(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 401 && this.status !== 403 && !RETRIED_STATUSES.has(this.status);
  }
}

/** Statuses worth another attempt, when the call is safe to repeat: too many requests, and the server's failures. */
const RETRIED_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504]);

/**
 * Lithic's REST API over fetch: each attempt with its time limit, the caller's signal obeyed, and a call
 * repeated only when repeating it cannot do a thing twice (a GET, a PATCH that sets a state, a POST with an
 * `Idempotency-Key`), on a network failure, 429 or 5xx. Answers are checked against `answer`.
 *
 * @example const card = await client.request({ method: 'GET', path: `/v1/cards/${token}`, answer: lithicCard })
 */
export class LithicClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #fetch: typeof fetch;

  constructor(options: LithicClientOptions) {
    this.#apiKey = options.apiKey;
    this.baseUrl = options.baseUrl ?? LITHIC_SANDBOX_URL;
    this.#timeoutMs = options.timeoutMs;
    this.#retries = options.retries ?? 2;
    this.#fetch = options.fetch ?? fetch;
  }

  async request<T>(request: LithicRequest<T>): Promise<T> {
    const repeatable = request.method !== 'POST' || request.idempotencyKey !== undefined;
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= this.#retries;
      try {
        return await this.#attempt(request);
      } catch (error) {
        const transient = !(error instanceof LithicApiError) || RETRIED_STATUSES.has(error.status);
        if (last || !transient || request.signal?.aborted || error instanceof LithicAnswerError) throw error;
        await sleep(50 * 4 ** attempt, undefined, { signal: request.signal }).catch(() => undefined);
        if (request.signal?.aborted) throw error;
      }
    }
  }

  async #attempt<T>(request: LithicRequest<T>): Promise<T> {
    // Under the base URL's own path, if it has one (a proxy at https://host/lithic): `new URL('/v1/…', base)` would drop it.
    const url = new URL(`${this.baseUrl.replace(/\/+$/, '')}${request.path}`);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const headers: Record<string, string> = { Authorization: this.#apiKey, Accept: 'application/json' };
    if (request.body !== undefined) headers['Content-Type'] = 'application/json';
    if (request.idempotencyKey !== undefined) headers['Idempotency-Key'] = request.idempotencyKey;
    const where = `${request.method} ${url.pathname}`;
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal,
      });
    } catch {
      throw new ProviderError(
        timeout.aborted ? `Lithic did not answer ${where} within ${this.#timeoutMs} ms` : `Lithic could not be reached (${where})`,
      );
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) throw new LithicApiError(response.status, `Lithic refused ${where} (${response.status}${lithicMessage(text)})`);
    const parsed = request.answer.safeParse(text === '' ? {} : safeJson(text));
    if (!parsed.success) throw new LithicAnswerError(`Lithic answered ${where} with a body this adapter does not understand`);
    return parsed.data;
  }
}

/** An answer that does not look like the document's: repeating the call would not change it. */
class LithicAnswerError extends ProviderError {}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Lithic's error body (`{ message, debugging_request_id }`): its message only, short, for the operator. */
function lithicMessage(text: string): string {
  const body = safeJson(text) as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? `: ${body.message.slice(0, 200)}` : '';
}
