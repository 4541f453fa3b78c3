import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { Logger } from '../infra/logger.js';
import { type CountedKey, type Counts, LocalWindowCounts, type WindowCount } from '../infra/window-counts.js';
import { tooManyRequests } from './http-errors.js';

/** The API's request limits (settings `API_RATE_LIMIT_PER_TOKEN`, `API_RATE_LIMIT_PER_ADDRESS`, `API_AUTH_FAILURES_PER_ADDRESS`). */
export interface RateLimits {
  /** Requests per minute one API token may make. */
  perTokenPerMinute: number;
  /** Requests per minute one client address may make: all its tokens together, and the public routes. */
  perAddressPerMinute: number;
  /** Failed authentications per 15 minutes one address may make; past that its requests without a valid token get 429. */
  authFailuresPerAddress: number;
  /** Posts per minute one address may make to the bot's webhook (Telegram's own traffic is far below it). */
  webhookPerAddressPerMinute?: number;
}

/** What a request's one count before its token is looked up found: its token's count (when it has one), its address's failures. */
export interface TokenCounts {
  token: WindowCount | undefined;
  failures: WindowCount;
}

/** The checks, each refusing with 429 and `Retry-After` (`tooManyRequests`) when over its limit. */
export interface RequestLimiter {
  /** Counts a request that reads no token (public and unknown routes) against its address. */
  address(request: FastifyRequest): Promise<void>;
  /** Counts a post to the bot's webhook against its address, apart from the API's counts. */
  webhook(request: FastifyRequest): Promise<void>;
  /**
   * Before the token is looked up, in one step (one round trip to Redis): counts the request against its
   * address, refused when over, and against its token by `tokenHash`, and reads its address's failed authentications.
   */
  beforeToken(request: FastifyRequest, tokenHash: string | undefined): Promise<TokenCounts>;
  /** Whether the request's token is over its own limit (then `tokenAccepted` refuses it). */
  overTokenLimit(counts: TokenCounts): boolean;
  /** The token is valid: refused when over its limit. Never by its address's failures. */
  tokenAccepted(counts: TokenCounts): void;
  /**
   * The token is missing or invalid: refused once its address has used up its failed authentications (nothing
   * more is counted or logged then); else counts this failure, and the caller answers 401.
   */
  tokenRefused(request: FastifyRequest, counts: TokenCounts): Promise<void>;
}

const MINUTE_MS = 60_000;
/** `WEBHOOK_RATE_LIMIT_PER_ADDRESS`'s default: 100 posts a second, above what Telegram sends one bot. */
export const DEFAULT_WEBHOOK_PER_MINUTE = 6_000;
const AUTH_FAILURE_WINDOW_MS = 15 * MINUTE_MS;

/** The address as rate limits key it: IPv6 by /64, IPv4-mapped as IPv4. */
function addressKey(request: FastifyRequest): string {
  const ip = request.ip;
  return ip.includes(':') ? normalizeIP(ip) : ip;
}

function refuseIfOver(counted: WindowCount, max: number): void {
  if (counted.count > max) throw tooManyRequests(counted.ttlMs / 1000);
}

/**
 * Request limits counted in fixed windows: in this process's memory, or, given shared `counts`
 * (`REDIS_URL`), in Redis, where every process adds to one count (addresses as the socket or a trusted
 * proxy tells them). An authenticated request's limits are counted in one step, so with Redis one round trip.
 *
 * A valid token is never refused for its address's failed authentications: everyone behind one NAT or
 * one untrusted proxy shares an address, and 21 bad requests from anyone would lock them all out. Past
 * the failures, only requests without a valid token are refused; each still costs one hash lookup, and
 * the address limit, counted before the lookup, bounds how many a flood of bad tokens gets.
 */
export function createRequestLimiter(limits: RateLimits, logger: Logger, counts: Counts = new LocalWindowCounts()): RequestLimiter {
  const addressCount = (address: string): CountedKey => ({ key: `api:address:${address}`, windowMs: MINUTE_MS });
  const failuresKey = (address: string) => `api:auth-failures:${address}`;

  return {
    async address(request) {
      const [address] = await counts.count([addressCount(addressKey(request))]);
      refuseIfOver(address!, limits.perAddressPerMinute);
    },

    async webhook(request) {
      const [posts] = await counts.count([{ key: `webhook:address:${addressKey(request)}`, windowMs: MINUTE_MS }]);
      refuseIfOver(posts!, limits.webhookPerAddressPerMinute ?? DEFAULT_WEBHOOK_PER_MINUTE);
    },

    async beforeToken(request, tokenHash) {
      const key = addressKey(request);
      const keys = [addressCount(key), { key: failuresKey(key) }];
      if (tokenHash !== undefined) keys.push({ key: `api:token:${tokenHash}`, windowMs: MINUTE_MS });
      const [address, failures, token] = await counts.count(keys);
      refuseIfOver(address!, limits.perAddressPerMinute);
      return { token, failures: failures! };
    },

    overTokenLimit({ token }) {
      return token !== undefined && token.count > limits.perTokenPerMinute;
    },

    tokenAccepted({ token }) {
      if (token) refuseIfOver(token, limits.perTokenPerMinute);
    },

    async tokenRefused(request, { failures }) {
      if (failures.count >= limits.authFailuresPerAddress) throw tooManyRequests(failures.ttlMs / 1000);
      const address = addressKey(request);
      const [counted] = await counts.count([{ key: failuresKey(address), windowMs: AUTH_FAILURE_WINDOW_MS }]);
      // Exactly one failure reaches the limit in a window (in Redis too: the count is atomic), so this is said once per window.
      if (counted!.count === limits.authFailuresPerAddress) {
        logger.warn(
          { address, failures: counted!.count, seconds: Math.ceil(counted!.ttlMs / 1000) },
          'An address used up its failed authentications: its requests without a valid token get 429 until the window ends',
        );
      }
    },
  };
}
