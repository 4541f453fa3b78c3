import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Counts } from '../infra/window-counts.js';

/**
 * The service-wide request budget (`CARD_SERVICE_MAX_RPS`): every request to the card service waits for a
 * turn, the bot's own (a user's tap) and the watcher's polls alike, so together they stay within it. Turns
 * are spaced evenly (one every 1000/maxPerSecond ms) rather than granted in bursts, so a request that
 * matters waits one spacing at most behind the others, not the rest of a second.
 *
 * Requests wait in lanes: a user's own request first, then a watched card's poll ("waiting for a code"),
 * then the checks of a token sent to link a chat, then the background polls. A lane is chosen for
 * everything called inside `run` (the choice follows the call through its awaits), or by the caller for one
 * request (`schedule`'s `lane`); a request outside any `run` is a user's own.
 *
 * Link checks are what anyone who writes to the bot can cause, so their lane is small: at most
 * `linkShare` of the turns (one a second at least), a few in flight at once, and a short queue; a check
 * that finds the queue full is refused at once (`ServiceBusyError`), never queued behind the others.
 * Every request may carry a signal (the client's request timeout): a request still waiting when it fires
 * leaves the queue, and nothing is sent.
 */
export type Lane = 'user' | 'watched' | 'link' | 'background';

const PRIORITY: Record<Lane, number> = { user: 3, watched: 2, link: 1, background: 0 };

/** A link check refused because too many are waiting already: nothing was sent; try again shortly. */
export class ServiceBusyError extends Error {
  override readonly name = 'ServiceBusyError';
  constructor(
    message = 'the card service is busy: too many link checks are waiting',
    /** 429 when the service itself said so. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface ScheduleOptions {
  /** The lane of this one request; else the lane `run` chose, else `user`. */
  lane?: Lane;
  /** Aborts the wait for a turn (the request is then never sent) and the call itself. */
  signal?: AbortSignal;
}

export interface RequestBudget {
  /** For the client's `schedule` option. */
  schedule<T>(call: () => Promise<T>, options?: ScheduleOptions): Promise<T>;
  /** Runs `work` with its requests in `lane`. */
  run<T>(lane: Lane, work: () => Promise<T>): Promise<T>;
  /** Requests waiting for a turn. */
  readonly waiting: number;
}

/** The window every instance counts its requests in, when they share a budget. */
export const SHARED_BUDGET_KEY = 'card-service:requests';

export interface RequestBudgetOptions {
  maxPerSecond: number;
  /**
   * Counts shared by every instance (Redis, `REDIS_URL`): each request also takes a place in a one-second
   * window they all count in, and waits for the next window when it is full, so several instances together
   * stay within `maxPerSecond`. While Redis is away the counts are this process's own (`WindowCounts`).
   */
  shared?: Counts;
  /** The share of the turns link checks may take at most (one a second at least). 0.1 by default. */
  linkShare?: number;
  /** Link checks in flight at once (waiting for a turn in the budget or for the service's answer). 2 by default. */
  linkConcurrency?: number;
  /** Link checks that may wait behind those; one more is refused at once. 4 by default. */
  linkQueue?: number;
}

export function createRequestBudget({
  maxPerSecond,
  shared,
  linkShare = 0.1,
  linkConcurrency = 2,
  linkQueue = 4,
}: RequestBudgetOptions): RequestBudget {
  if (!(maxPerSecond > 0) || !Number.isFinite(maxPerSecond)) throw new RangeError('maxPerSecond must be a positive number');
  const queue = new PQueue({ intervalCap: 1, interval: 1000 / maxPerSecond });
  const links = new PQueue({
    concurrency: linkConcurrency,
    intervalCap: 1,
    interval: 1000 / Math.min(maxPerSecond, Math.max(1, maxPerSecond * linkShare)),
  });
  const lanes = new AsyncLocalStorage<Lane>();
  const sharedTurn = async (signal?: AbortSignal): Promise<void> => {
    for (;;) {
      const [window] = await shared!.count([{ key: SHARED_BUDGET_KEY, windowMs: 1000 }]);
      if (window!.count <= maxPerSecond) return;
      await sleep(Math.max(window!.ttlMs, 1), undefined, signal ? { signal } : {});
    }
  };
  // Nothing is sent once the caller has given up, whatever the wait it gave up in.
  const turn = async <T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    if (shared) await sharedTurn(signal);
    signal?.throwIfAborted();
    return call();
  };
  const inQueue = <T>(call: () => Promise<T>, lane: Lane, signal?: AbortSignal): Promise<T> =>
    queue.add(() => turn(call, signal), { priority: PRIORITY[lane], ...(signal ? { signal } : {}) });
  return {
    schedule<T>(call: () => Promise<T>, options: ScheduleOptions = {}): Promise<T> {
      const lane = options.lane ?? lanes.getStore() ?? 'user';
      const { signal } = options;
      if (lane !== 'link') return inQueue(call, lane, signal);
      if (links.size >= linkQueue) return Promise.reject(new ServiceBusyError());
      return links.add(() => inQueue(call, lane, signal), signal ? { signal } : {});
    },
    run: (lane, work) => lanes.run(lane, work),
    get waiting() {
      return queue.size + links.size;
    },
  };
}
