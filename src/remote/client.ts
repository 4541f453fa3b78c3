import type { ScheduleOptions } from './budget.js';
import { type Capabilities, type SessionDeps, session, unknownCapabilities } from './session.js';

export { ServiceBusyError } from './budget.js';
export { OutcomeUnknownError, remoteStatusOf, ServiceUnavailableError } from './service-errors.js';
export type { TopupQuote } from './session.js';

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
 *
 * Here the client is assembled: the requests are `session.ts`, one exchange `exchange.ts`, its errors
 * `service-errors.ts`.
 */

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

/**
 * The client: `as(token)` is what one user may do at the service (session.ts); `capabilities()` what the
 * service was found to have beyond the interface.
 */
export function createRemoteCardClient(options: RemoteClientOptions) {
  const capabilities: Capabilities = unknownCapabilities();
  const deps: SessionDeps = {
    base: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.fetch ?? fetch,
    schedule: options.schedule ?? (<T>(call: () => Promise<T>) => call()),
    timeoutMs: options.timeoutMs,
    maxAnswerBytes: options.maxAnswerBytes ?? MAX_ANSWER_BYTES,
    getRetries: options.getRetries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 200,
    ...(options.observe ? { observe: options.observe } : {}),
    capabilities,
  };
  return {
    as: (token: string) => session(deps, token),
    capabilities: (): Readonly<Capabilities> => ({ ...capabilities }),
  };
}

export type RemoteCardClient = ReturnType<typeof createRemoteCardClient>;
export type RemoteSession = ReturnType<RemoteCardClient['as']>;
