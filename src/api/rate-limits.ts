import fastifyRateLimit, { normalizeIP, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WindowCount, WindowCounts } from '../window-counts.js';
import { tooManyRequests } from './http-errors.js';

/** The API's request limits (settings `API_RATE_LIMIT_PER_TOKEN`, `API_RATE_LIMIT_PER_ADDRESS`, `API_AUTH_FAILURES_PER_ADDRESS`). */
export interface RateLimits {
  /** Requests per minute one API token may make. */
  perTokenPerMinute: number;
  /** Requests per minute one client address may make: all its tokens together, and the public routes. */
  perAddressPerMinute: number;
  /** Failed authentications per 15 minutes one address may make; past that it is refused before its token is read. */
  authFailuresPerAddress: number;
}

/** The checks, each refusing with 429 and `Retry-After` (`tooManyRequests`) when over its limit. */
export interface RequestLimiter {
  /** Counts the request against its address. */
  address(request: FastifyRequest): Promise<void>;
  /** Refuses an address that has failed authentication too often; counts nothing. Synchronous when counted in memory. */
  beforeToken(request: FastifyRequest): void | Promise<void>;
  /** Counts a failed authentication against the address. */
  tokenRefused(request: FastifyRequest): Promise<void>;
  /** Counts the request against its (valid) token, by `request.tokenHash`. */
  token(request: FastifyRequest): Promise<void>;
}

const MINUTE_MS = 60_000;
const AUTH_FAILURE_WINDOW_MS = 15 * MINUTE_MS;
/** Addresses refused for failed authentications remembered at once; past that the oldest refusal is lifted early. */
const MAX_REFUSED_ADDRESSES = 100_000;

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;
type Outcome = Awaited<ReturnType<Limiter>>;
type Counted = Extract<Outcome, { isAllowed: false }>;

/** The plugin's own address key (IPv6 by /64, IPv4-mapped as IPv4), without its IPv6 test for a plain IPv4 address. */
function addressKey(request: FastifyRequest): string {
  const ip = request.ip;
  return ip.includes(':') ? normalizeIP(ip) : ip;
}

/** The plugin's store over shared counts. Each limit's keys carry its name, so one store serves the three. */
function sharedStore(counts: WindowCounts): FastifyRateLimitStoreCtor {
  type Done = (error: Error | null, result?: { current: number; ttl: number }) => void;
  const answer = (done: Done) => (c: WindowCount) => done(null, { current: c.count, ttl: c.ttlMs });
  return class SharedStore {
    incr(key: string, done: Done, timeWindow: number) {
      void counts.hit(key, timeWindow).then(answer(done), done);
    }
    read(key: string, done: Done) {
      void counts.peek(key).then(answer(done), done);
    }
    child() {
      return this;
    }
  };
}

/**
 * Request limits counted by @fastify/rate-limit in fixed windows: in this process's memory, or, given
 * `shared` counts (`REDIS_URL`), in Redis, where every process adds to one count (addresses as the socket
 * or a trusted proxy tells them). Registers the plugin without limiting any route by itself; the checks
 * are attached by the server and authentication.
 */
export function installRateLimits(app: FastifyInstance, limits: RateLimits, shared?: WindowCounts): RequestLimiter {
  void app.register(fastifyRateLimit, { global: false, ...(shared && { store: sharedStore(shared) }) });
  let limiters: { address: Limiter; failures: Limiter; token: Limiter } | undefined;
  // The plugin's `createRateLimit` exists once it has loaded (at `ready`), so before any request.
  const made = () =>
    (limiters ??= {
      address: app.createRateLimit({
        max: limits.perAddressPerMinute,
        timeWindow: MINUTE_MS,
        keyGenerator: (request) => `api:address:${addressKey(request)}`,
      }),
      failures: app.createRateLimit({
        max: limits.authFailuresPerAddress,
        timeWindow: AUTH_FAILURE_WINDOW_MS,
        keyGenerator: (request) => `api:auth-failures:${addressKey(request)}`,
      }),
      token: app.createRateLimit({
        max: limits.perTokenPerMinute,
        timeWindow: MINUTE_MS,
        keyGenerator: (request) => `api:token:${request.tokenHash}`,
      }),
    });

  const refuseIfExceeded = (outcome: Outcome) => {
    if (!outcome.isAllowed && outcome.isExceeded) throw tooManyRequests(outcome.ttlInSeconds);
  };
  const failuresUsedUp = (outcome: Outcome): outcome is Counted => !outcome.isAllowed && outcome.remaining === 0 && outcome.ttl > 0;

  const counted = {
    address: (request: FastifyRequest) => made().address(request).then(refuseIfExceeded),
    token: (request: FastifyRequest) => made().token(request).then(refuseIfExceeded),
  };
  if (shared) {
    // Another process may have counted the failures: ask the shared count before every token.
    return {
      ...counted,
      async beforeToken(request) {
        const outcome = await made().failures(request, { increment: false });
        if (failuresUsedUp(outcome)) throw tooManyRequests(outcome.ttlInSeconds);
      },
      async tokenRefused(request) {
        await made().failures(request);
      },
    };
  }

  // In memory, the addresses whose failures reached the limit are kept apart from the counts until their
  // window ends: checked before every token, a map lookup (usually of an empty map) instead of a limiter call.
  const refusedUntil = new Map<string, number>();
  return {
    ...counted,
    beforeToken(request) {
      if (refusedUntil.size === 0) return;
      const key = addressKey(request);
      const until = refusedUntil.get(key);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left > 0) throw tooManyRequests(left / 1000);
      refusedUntil.delete(key);
    },
    async tokenRefused(request) {
      const outcome = await made().failures(request);
      if (!failuresUsedUp(outcome)) return;
      const key = addressKey(request);
      refusedUntil.delete(key);
      refusedUntil.set(key, Date.now() + outcome.ttl);
      if (refusedUntil.size > MAX_REFUSED_ADDRESSES) refusedUntil.delete(refusedUntil.keys().next().value!);
    },
  };
}
