import { loggableError } from './log-safe.js';
import type { Logger } from './logger.js';
import type { Redis } from './redis.js';

/** How many hits a key has in its current window, and how long that window has left. */
export interface WindowCount {
  count: number;
  ttlMs: number;
}

/** One key of a count: hit (a window of `windowMs`, started by its first hit) or, without `windowMs`, only read. */
export interface CountedKey {
  key: string;
  windowMs?: number;
}

/** Counts several keys in one step: in this process (at once) or in Redis (one round trip). */
export interface Counts {
  /** The keys' counts, in order, each hit or read as its entry says. */
  count(keys: readonly CountedKey[]): WindowCount[] | Promise<WindowCount[]>;
}

// One script for every key a request counts, so a request costs one round trip. A fixed window starts with
// its first hit; the expiry is set in the same script as the count, so a crash between the two can never leave
// a count that lasts forever (a user refused for good). A window of 0 only reads the key: a count without an
// expiry reads as none.
const COUNT = `
local result = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i])
  local count, ttl
  if window > 0 then
    count = redis.call('INCR', key)
    ttl = redis.call('PTTL', key)
    if ttl < 0 then
      redis.call('PEXPIRE', key, window)
      ttl = window
    end
  else
    ttl = redis.call('PTTL', key)
    if ttl < 0 then
      count, ttl = 0, 0
    else
      count = tonumber(redis.call('GET', key))
    end
  end
  result[2 * i - 1] = count
  result[2 * i] = ttl
end
return result`;

/** Windows this process keeps while Redis is away; past that the oldest is forgotten (its limit lifted early). */
const MAX_LOCAL_WINDOWS = 100_000;
/** After Redis failed a count, how long the counts stay in this process before Redis is tried again. */
const BREAKER_MS = 10_000;

export interface WindowCountsOptions {
  /** How long counts stay in this process after Redis failed one (10 s by default). */
  breakerMs?: number;
  /** The time in ms (tests move it); `Date.now` by default. */
  now?: () => number;
}

/**
 * Fixed-window counts in Redis, shared by every process that uses the same Redis. While Redis cannot be
 * reached (or answers too slowly) the counts are kept in this process instead, so each process still holds
 * every limit on its own: a limiter that is down costs the limits their sharing, never their existence,
 * and never the service. A failed count opens a breaker: for `breakerMs` nothing is asked of Redis, so a
 * hung Redis costs one command timeout per breaker window, not one per count; then one count tries Redis
 * again while the others stay local. A client that reconnects closes the breaker at once. The outage is logged when it starts and when it ends.
 */
export class WindowCounts implements Counts {
  readonly #local: LocalWindowCounts;
  readonly #breakerMs: number;
  readonly #now: () => number;
  #outage: { since: number; failures: number } | undefined;
  /** Until when counts stay in this process (the breaker is open). */
  #localUntil = 0;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    options: WindowCountsOptions = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#breakerMs = options.breakerMs ?? BREAKER_MS;
    this.#local = new LocalWindowCounts(this.#now);
    // A client that has (re)connected is worth asking at once: a lost connection fails fast, only a hung one costs time.
    redis.on('ready', () => {
      this.#localUntil = 0;
    });
  }

  async count(keys: readonly CountedKey[]): Promise<WindowCount[]> {
    if (this.#outage) {
      if (this.#now() < this.#localUntil) return this.#local.count(keys);
      // This count tries Redis again; the ones that come while it waits stay local.
      this.#localUntil = this.#now() + this.#breakerMs;
    }
    try {
      const windows = keys.map((k) => k.windowMs ?? 0);
      const reply = (await this.redis.eval(COUNT, keys.length, ...keys.map((k) => k.key), ...windows)) as number[];
      this.#answered();
      return keys.map((_, i) => ({ count: reply[2 * i]!, ttlMs: reply[2 * i + 1]! }));
    } catch (error) {
      this.#failed(error);
      return this.#local.count(keys);
    }
  }

  /** Counts a hit of `key`; its window, `windowMs` long, starts with the first hit. */
  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return (await this.count([{ key, windowMs }]))[0]!;
  }

  /** The count of `key` without counting (0 outside a window). */
  async peek(key: string): Promise<WindowCount> {
    return (await this.count([{ key }]))[0]!;
  }

  #answered(): void {
    if (!this.#outage) return;
    const { since, failures } = this.#outage;
    this.#outage = undefined;
    this.logger.info({ failures, seconds: Math.round((this.#now() - since) / 1000) }, 'Redis answers again: rate limits are shared again');
  }

  #failed(error: unknown): void {
    this.#localUntil = this.#now() + this.#breakerMs;
    if (this.#outage) {
      this.#outage.failures++;
      return;
    }
    this.#outage = { since: this.#now(), failures: 1 };
    this.logger.warn({ err: loggableError(error) }, 'Redis does not answer: rate limits are counted in this process until it does');
  }
}

/** The same windows in this process's memory. */
export class LocalWindowCounts implements Counts {
  readonly #windows = new Map<string, { count: number; endsAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  count(keys: readonly CountedKey[]): WindowCount[] {
    const now = this.now();
    return keys.map(({ key, windowMs }) => (windowMs === undefined ? this.#peek(key, now) : this.#hit(key, windowMs, now)));
  }

  #hit(key: string, windowMs: number, now: number): WindowCount {
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

  #peek(key: string, now: number): WindowCount {
    const window = this.#windows.get(key);
    const left = window === undefined ? 0 : window.endsAt - now;
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
