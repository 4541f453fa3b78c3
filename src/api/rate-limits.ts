import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  /** Refuses an address that has failed authentication too often; counts nothing. */
  beforeToken(request: FastifyRequest): void;
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

/** The plugin's own address key (IPv6 by /64, IPv4-mapped as IPv4), without its IPv6 test for a plain IPv4 address. */
function addressKey(request: FastifyRequest): string {
  const ip = request.ip;
  return ip.includes(':') ? normalizeIP(ip) : ip;
}

/**
 * Request limits counted in memory per process by @fastify/rate-limit (fixed windows; addresses as
 * the socket sees them, so behind a proxy every client shares the proxy's). Registers the plugin
 * without limiting any route by itself; the checks are attached by the server and authentication.
 */
export function installRateLimits(app: FastifyInstance, limits: RateLimits): RequestLimiter {
  void app.register(fastifyRateLimit, { global: false });
  let limiters: { address: Limiter; failures: Limiter; token: Limiter } | undefined;
  // The plugin's `createRateLimit` exists once it has loaded (at `ready`), so before any request.
  const made = () =>
    (limiters ??= {
      address: app.createRateLimit({ max: limits.perAddressPerMinute, timeWindow: MINUTE_MS, keyGenerator: addressKey }),
      failures: app.createRateLimit({ max: limits.authFailuresPerAddress, timeWindow: AUTH_FAILURE_WINDOW_MS, keyGenerator: addressKey }),
      token: app.createRateLimit({ max: limits.perTokenPerMinute, timeWindow: MINUTE_MS, keyGenerator: (request) => request.tokenHash }),
    });

  const refuseIfExceeded = (outcome: Awaited<ReturnType<Limiter>>) => {
    if (!outcome.isAllowed && outcome.isExceeded) throw tooManyRequests(outcome.ttlInSeconds);
  };

  // Addresses whose failures reached the limit, until their window ends: checked before every token, so
  // kept apart from the counts (a map lookup, usually of an empty map, instead of a limiter call).
  const refusedUntil = new Map<string, number>();

  return {
    address: (request) => made().address(request).then(refuseIfExceeded),
    token: (request) => made().token(request).then(refuseIfExceeded),
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
      if (outcome.isAllowed || outcome.remaining > 0) return;
      refusedUntil.delete(outcome.key);
      refusedUntil.set(outcome.key, Date.now() + outcome.ttl);
      if (refusedUntil.size > MAX_REFUSED_ADDRESSES) refusedUntil.delete(refusedUntil.keys().next().value!);
    },
  };
}
