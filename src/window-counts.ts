import { loggableError } from './log-safe.js';
import type { Logger } from './logger.js';
import type { Redis } from './redis.js';

/** How many hits a key has in its current window, and how long that window has left. */
export interface WindowCount {
  count: number;
  ttlMs: number;
}

// A fixed window starts with its first hit. The expiry is set in the same script as the count, so a
// crash between the two can never leave a count that lasts forever (a user refused for good).
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

const PEEK = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return {0, 0} end
return {tonumber(redis.call('GET', KEYS[1])), ttl}`;

/** Windows this process keeps while Redis is away; past that the oldest is forgotten (its limit lifted early). */
const MAX_LOCAL_WINDOWS = 100_000;

/**
 * Fixed-window counts in Redis, shared by every process that uses the same Redis. While Redis cannot be
 * reached (or answers too slowly) the counts are kept in this process instead, so each process still holds
 * every limit on its own: a limiter that is down costs the limits their sharing, never their existence,
 * and never the service. The outage is logged when it starts and when it ends.
 */
export class WindowCounts {
  readonly #local = new LocalWindowCounts();
  #outage: { since: number; failures: number } | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  /** Counts a hit of `key`; its window, `windowMs` long, starts with the first hit. */
  async hit(key: string, windowMs: number): Promise<WindowCount> {
    try {
      return this.#answered((await this.redis.eval(HIT, 1, key, windowMs)) as [number, number]);
    } catch (error) {
      this.#failed(error);
      return this.#local.hit(key, windowMs);
    }
  }

  /** The count of `key` without counting (0 outside a window). */
  async peek(key: string): Promise<WindowCount> {
    try {
      return this.#answered((await this.redis.eval(PEEK, 1, key)) as [number, number]);
    } catch (error) {
      this.#failed(error);
      return this.#local.peek(key);
    }
  }

  #answered([count, ttlMs]: [number, number]): WindowCount {
    if (this.#outage) {
      const { since, failures } = this.#outage;
      this.#outage = undefined;
      this.logger.info({ failures, seconds: Math.round((Date.now() - since) / 1000) }, 'Redis answers again: rate limits are shared again');
    }
    return { count, ttlMs };
  }

  #failed(error: unknown): void {
    if (this.#outage) {
      this.#outage.failures++;
      return;
    }
    this.#outage = { since: Date.now(), failures: 1 };
    this.logger.warn({ err: loggableError(error) }, 'Redis does not answer: rate limits are counted in this process until it does');
  }
}

/** The same windows in this process's memory. */
class LocalWindowCounts {
  readonly #windows = new Map<string, { count: number; endsAt: number }>();

  hit(key: string, windowMs: number): WindowCount {
    const now = Date.now();
    let window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      this.#windows.delete(key);
      window = { count: 0, endsAt: now + windowMs };
      this.#windows.set(key, window);
      if (this.#windows.size > MAX_LOCAL_WINDOWS) this.#windows.delete(this.#windows.keys().next().value!);
    }
    window.count++;
    return { count: window.count, ttlMs: window.endsAt - now };
  }

  peek(key: string): WindowCount {
    const window = this.#windows.get(key);
    const left = window === undefined ? 0 : window.endsAt - Date.now();
    return left > 0 ? { count: window!.count, ttlMs: left } : { count: 0, ttlMs: 0 };
  }
}

/**
 * The counts as @grammyjs/ratelimiter's `storageClient`, one window of `windowMs`. The plugin sets the
 * expiry itself after a first count, in a second call; here the count sets it, atomically, so that call
 * has nothing left to do.
 */
export function ratelimiterStorage(counts: WindowCounts, windowMs: number) {
  return {
    incr: async (key: string) => (await counts.hit(key, windowMs)).count,
    pexpire: async () => 1,
  };
}
