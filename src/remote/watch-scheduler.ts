import type { Logger } from 'pino';
import { CardServiceError } from '../core/rules/errors.js';
import { getOrCreate } from '../infra/get-or-create.js';
import { loggableError } from '../infra/log-safe.js';
import type { Lane } from './budget.js';
import { ServiceUnavailableError } from './service-errors.js';
import type { DueCard, DueUser } from './poll-schedule.js';
import type { PollDeps } from './poll.js';
import { pollCard } from './poll-otps.js';
import { pollTransactions } from './poll-transactions.js';
import { PRUNE_EVERY_MS, pruneSeen } from './seen.js';
import { tokenRefusalConfirmed } from './token-refusal.js';

/**
 * The remote watch's scheduler: each pass (src/remote/watch.ts runs it on the background loop) reads the
 * linked users, launches the watched cards' polls in their lane, and fills the background window from rounds
 * that alternate between users; a failed poll pauses the polls, ends a refused token's polls, or forgets a
 * card the service does not find.
 */

/** The watch's settings, defaults applied (see `RemoteWatchOptions`). */
export interface WatchSettings {
  pollMs: number;
  watchMs: number;
  window: number;
  perUser: number;
  tickMs: number;
  usersRefreshMs: number;
  maxBackoffMs: number;
  confirmRefusalMs: number;
}

/** What the scheduler changes from pass to pass. */
export interface WatchState {
  stopped: boolean;
  /** The next pass reads the users whatever their age (a wake, a user taken). */
  forceUsers: boolean;
  /** Linked users not refused: user id → token. */
  users: Map<string, string>;
  usersReadAt: number;
  /**
   * Tokens refused (a 401, asked again): token → when, as the clock says, just before its links were ended.
   * Kept only while the users read still list the token (its old links not yet seen ended); a user listed
   * with a link made after that is linked again (here or on another instance), and is polled again.
   */
  refused: Map<string, number>;
  /** Tokens whose 401 is being asked about again. */
  confirming: Set<string>;
  pausedUntil: number;
  prunedAt: number;
  backoffMs: number;
  round: Job[];
  roundBuiltAt: number;
  rotation: number;
  background: number;
  /** Polls under way, by card (or user's transactions): one at a time each. */
  busy: Set<string>;
  underWay: Set<Promise<void>>;
}

export const newWatchState = (): WatchState => ({
  stopped: false,
  forceUsers: true,
  users: new Map(),
  usersReadAt: Number.NEGATIVE_INFINITY,
  refused: new Map(),
  confirming: new Set(),
  pausedUntil: 0,
  prunedAt: Number.NEGATIVE_INFINITY,
  backoffMs: 0,
  round: [],
  roundBuiltAt: Number.NEGATIVE_INFINITY,
  rotation: 0,
  background: 0,
  busy: new Set(),
  underWay: new Set(),
});

export interface WatchDeps extends PollDeps {
  logger: Logger;
  settings: WatchSettings;
  state: WatchState;
  users: () => Promise<{ userId: string; token: string; linkedAt?: string }[]>;
  onTokenRefused: (userId: string) => void | Promise<void>;
  /** Runs a request in a lane of the request budget (at once without one). */
  inLane<T>(lane: Lane, work: () => Promise<T>): Promise<T>;
  /** Runs a pass soon: a place in the background window came free. */
  wake(): void;
}

type Job = { kind: 'card'; due: DueCard } | { kind: 'transactions'; due: DueUser };

const keyOf = (job: Job) => (job.kind === 'card' ? `${job.due.userId}\u0000${job.due.cardId}` : `${job.due.userId}\u0000`);

/** One pass: prune now and then, read the users, launch the watched cards' polls, fill the background window. */
export async function pass(deps: WatchDeps): Promise<void> {
  const { db, clock, known, settings, state, pageSize, maxPages } = deps;
  const force = state.forceUsers;
  state.forceUsers = false;
  const nowMs = clock.now().getTime();
  if (nowMs - state.prunedAt >= PRUNE_EVERY_MS) {
    state.prunedAt = nowMs;
    await pruneSeen(db, new Date(nowMs), pageSize * maxPages);
    await known.pruneOwn(nowMs);
  }
  if (nowMs < state.pausedUntil) return;
  await readUsers(deps, nowMs, force);
  const ids = [...state.users.keys()];
  if (ids.length === 0) return;
  const { pollMs, watchMs } = settings;
  for (const due of await known.dueCards(ids, nowMs, { pollMs, watchMs, watchedOnly: true }))
    launch(deps, { kind: 'card', due }, 'watched');
  while (state.background < settings.window && !state.stopped) {
    if (state.round.length === 0) {
      if (nowMs - state.roundBuiltAt < Math.max(settings.tickMs, 250)) break;
      state.roundBuiltAt = nowMs;
      state.round = await buildRound(deps, ids, nowMs);
      if (state.round.length === 0) break;
    }
    const job = state.round.shift()!;
    // A watched card is polled in its own lane; a user gone or refused since the round was built is skipped.
    if (job.kind === 'card' && job.due.watched) continue;
    launch(deps, job, 'background');
  }
}

async function readUsers(deps: WatchDeps, nowMs: number, force: boolean): Promise<void> {
  const { state, logger } = deps;
  if (!force && nowMs - state.usersReadAt < deps.settings.usersRefreshMs) return;
  state.usersReadAt = nowMs;
  try {
    const listed = await deps.users();
    const next = new Map<string, string>();
    for (const { userId, token, linkedAt } of listed) {
      const refusedAt = state.refused.get(token);
      if (refusedAt !== undefined && linkedAt !== undefined && Date.parse(linkedAt) > refusedAt) state.refused.delete(token);
      if (!state.refused.has(token)) next.set(userId, token);
    }
    // A refused token no longer listed (its links ended) is forgotten: linked again, it is polled.
    const tokens = new Set(listed.map((u) => u.token));
    for (const token of state.refused.keys()) if (!tokens.has(token)) state.refused.delete(token);
    const added = [...next.keys()].filter((id) => !state.users.has(id));
    await deps.known.ensureUsers(added);
    state.users = next;
  } catch (error) {
    logger.warn({ err: loggableError(error) }, 'remote watch: the linked users could not be read; kept the last list');
  }
}

/** The next round of background polls: users in turn, each its transactions then some of its cards. */
async function buildRound({ known, settings, state }: WatchDeps, ids: string[], nowMs: number): Promise<Job[]> {
  const { pollMs, watchMs } = settings;
  const perUserJobs = new Map<string, Job[]>();
  const jobsOf = (userId: string) => getOrCreate(perUserJobs, userId, (): Job[] => []);
  for (const due of await known.dueUsers(ids, nowMs, pollMs)) jobsOf(due.userId).push({ kind: 'transactions', due });
  for (const due of await known.dueCards(ids, nowMs, { pollMs, watchMs })) {
    if (due.watched) continue;
    const jobs = jobsOf(due.userId);
    if (jobs.filter((j) => j.kind === 'card').length < settings.perUser) jobs.push({ kind: 'card', due });
  }
  const order = [...perUserJobs.keys()].sort();
  const start = order.length === 0 ? 0 : state.rotation++ % order.length;
  const turns = [...order.slice(start), ...order.slice(0, start)].map((id) => perUserJobs.get(id)!);
  const out: Job[] = [];
  for (let i = 0; turns.some((jobs) => i < jobs.length); i++) for (const jobs of turns) if (i < jobs.length) out.push(jobs[i]!);
  return out;
}

function launch(deps: WatchDeps, job: Job, lane: Lane): void {
  const { state } = deps;
  const token = state.users.get(job.due.userId);
  const key = keyOf(job);
  if (token === undefined || state.busy.has(key)) return;
  state.busy.add(key);
  if (lane === 'background') state.background++;
  const run = (async () => {
    try {
      await deps.inLane(lane, () => (job.kind === 'card' ? pollCard(deps, job.due, token) : pollTransactions(deps, job.due, token)));
    } catch (error) {
      await failed(deps, error, job, token);
    } finally {
      state.busy.delete(key);
      if (lane === 'background') state.background--;
      // A free place in the window: fill it now rather than at the next tick.
      if (lane === 'background' && !state.stopped) deps.wake();
    }
  })();
  state.underWay.add(run);
  void run.finally(() => state.underWay.delete(run));
}

async function failed(deps: WatchDeps, error: unknown, job: Job, token: string): Promise<void> {
  const { clock, logger, state, settings } = deps;
  const userId = job.due.userId;
  if (error instanceof CardServiceError && error.code === 'INVALID_TOKEN') {
    if (state.refused.has(token) || state.confirming.has(token)) return;
    // One 401 is not forever (a service restarting, a proxy's hiccup): the token is asked about again.
    state.confirming.add(token);
    let confirmed: boolean;
    try {
      confirmed = await deps.inLane(job.kind === 'card' && job.due.watched ? 'watched' : 'background', () =>
        tokenRefusalConfirmed(deps.client.as(token), settings.confirmRefusalMs),
      );
    } finally {
      state.confirming.delete(token);
    }
    if (!confirmed) {
      logger.info({ userId }, 'remote watch: the service refused the token once, then not; polls go on');
      return;
    }
    if (state.refused.has(token)) return;
    state.refused.set(token, clock.now().getTime());
    if (state.users.get(userId) === token) state.users.delete(userId);
    state.round = state.round.filter((j) => j.due.userId !== userId);
    logger.info({ userId }, 'remote watch: the service refused the token twice; no more polls for this user until it is linked again');
    try {
      await deps.onTokenRefused(userId);
    } catch (cause) {
      logger.warn({ userId, err: loggableError(cause) }, 'remote watch: onTokenRefused failed');
    }
    return;
  }
  if (error instanceof CardServiceError && error.code === 'CARD_NOT_FOUND' && job.kind === 'card') {
    logger.info({ userId, cardId: job.due.cardId }, 'remote watch: the service does not find the card; forgotten');
    await deps.known.forget(userId, job.due.cardId);
    return;
  }
  if (error instanceof ServiceUnavailableError) {
    state.backoffMs = error.retryAfterMs ?? Math.min(settings.maxBackoffMs, state.backoffMs === 0 ? 1000 : state.backoffMs * 2);
    state.pausedUntil = Math.max(state.pausedUntil, clock.now().getTime() + state.backoffMs);
    logger.warn({ status: error.status, pauseMs: state.backoffMs }, 'remote watch: the card service is busy or failing; polls paused');
    return;
  }
  logger.warn({ userId, err: loggableError(error) }, 'remote watch: a poll failed');
}
