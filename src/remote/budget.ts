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
 * then the background polls. A lane is chosen for everything called inside `run` (the choice follows the
 * call through its awaits); a request outside any `run` is a user's own.
 */
export type Lane = 'user' | 'watched' | 'background';

const PRIORITY: Record<Lane, number> = { user: 2, watched: 1, background: 0 };

export interface RequestBudget {
  /** For the client's `schedule` option. */
  schedule<T>(call: () => Promise<T>): Promise<T>;
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
}

export function createRequestBudget({ maxPerSecond, shared }: RequestBudgetOptions): RequestBudget {
  if (!(maxPerSecond > 0) || !Number.isFinite(maxPerSecond)) throw new RangeError('maxPerSecond must be a positive number');
  const queue = new PQueue({ intervalCap: 1, interval: 1000 / maxPerSecond });
  const lanes = new AsyncLocalStorage<Lane>();
  const sharedTurn = async (): Promise<void> => {
    for (;;) {
      const [window] = await shared!.count([{ key: SHARED_BUDGET_KEY, windowMs: 1000 }]);
      if (window!.count <= maxPerSecond) return;
      await sleep(Math.max(window!.ttlMs, 1));
    }
  };
  const turn = shared ? <T>(call: () => Promise<T>) => sharedTurn().then(call) : <T>(call: () => Promise<T>) => call();
  return {
    schedule: <T>(call: () => Promise<T>) => queue.add(() => turn(call), { priority: PRIORITY[lanes.getStore() ?? 'user'] }),
    run: (lane, work) => lanes.run(lane, work),
    get waiting() {
      return queue.size;
    },
  };
}
