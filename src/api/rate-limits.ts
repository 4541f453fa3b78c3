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
  /** Whether the request was counted against its address already (it had no token): else it is once its token is refused. */
  addressCounted: boolean;
}

/** The checks, each refusing with 429 and `Retry-After` (`tooManyRequests`) when over its limit. */
export interface RequestLimiter {
  /** Counts a request that reads no token (public and unknown routes) against its address. */
  address(request: FastifyRequest): Promise<void>;
  /** Counts a post to the bot's webhook against its address, apart from the API's counts. */
  webhook(request: FastifyRequest): Promise<void>;
  /**
   * Before the token is looked up, in one step (one round trip to Redis): counts the request against its
   * token by `tokenHash` and reads its address's failed authentications; a request without a token is
   * counted against its address instead, refused when over. A request with a token is counted against
   * its address only if the token is refused (`tokenRefused`): a valid token is limited per token alone.
   */
  beforeToken(request: FastifyRequest, tokenHash: string | undefined): Promise<TokenCounts>;
  /** Whether the request's token is over its own limit (then `tokenAccepted` refuses it). */
  overTokenLimit(counts: TokenCounts): boolean;
  /** The token is valid: refused when over its limit. Never by its address's failures. */
  tokenAccepted(counts: TokenCounts): void;
  /**
   * The token is missing or invalid: counted against its address (refused when over), and refused once
   * its address has used up its failed authentications (no more failures are counted or logged then);
   * else counts this failure, and the caller answers 401.
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
 * A valid token is limited per token only, never by its address: everyone behind one NAT or one untrusted
 * proxy shares an address, and anyone there could otherwise spend it (1,200 junk requests, or 21 bad
 * tokens) and lock them all out. The address limit and its failed authentications hold the requests
 * without a valid token (public and unknown routes, missing and invalid tokens). A token is looked up
 * before its address may refuse it, so each bad token of a flood costs one hash lookup (by index) before
 * its 429.
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
      if (tokenHash === undefined) {
        const [address, failures] = await counts.count([addressCount(key), { key: failuresKey(key) }]);
        refuseIfOver(address!, limits.perAddressPerMinute);
        return { token: undefined, failures: failures!, addressCounted: true };
      }
      const [failures, token] = await counts.count([{ key: failuresKey(key) }, { key: `api:token:${tokenHash}`, windowMs: MINUTE_MS }]);
      return { token, failures: failures!, addressCounted: false };
    },

    overTokenLimit({ token }) {
      return token !== undefined && token.count > limits.perTokenPerMinute;
    },

    tokenAccepted({ token }) {
      if (token) refuseIfOver(token, limits.perTokenPerMinute);
    },

    async tokenRefused(request, { failures, addressCounted }) {
      const address = addressKey(request);
      const lockedOut = failures.count >= limits.authFailuresPerAddress;
      const keys: CountedKey[] = [];
      if (!addressCounted) keys.push(addressCount(address));
      if (!lockedOut) keys.push({ key: failuresKey(address), windowMs: AUTH_FAILURE_WINDOW_MS });
      const counted = keys.length === 0 ? [] : await counts.count(keys);
      if (!addressCounted) refuseIfOver(counted.shift()!, limits.perAddressPerMinute);
      if (lockedOut) throw tooManyRequests(failures.ttlMs / 1000);
      const failed = counted[0]!;
      // Exactly one failure reaches the limit in a window (in Redis too: the count is atomic), so this is said once per window.
      if (failed.count === limits.authFailuresPerAddress) {
        logger.warn(
          { address, failures: failed.count, seconds: Math.ceil(failed.ttlMs / 1000) },
          'An address used up its failed authentications: its requests without a valid token get 429 until the window ends',
        );
      }
    },
  };
}
