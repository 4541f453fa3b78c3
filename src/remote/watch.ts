import type { Logger } from 'pino';
import type { Clock } from '../infra/clock.js';
import type { Db } from '../db/schema.js';
import { loggableError } from '../infra/log-safe.js';
import { type Loop, startLoop } from '../infra/loop.js';
import type { RequestBudget } from './budget.js';
import type { RemoteCardClient } from './client.js';
import { createKnownCards } from './known-cards.js';
import { pollTransactions } from './poll-transactions.js';
import { remoteTables } from './tables.js';
import { CONFIRM_REFUSAL_DELAY_MS } from './token-refusal.js';
import { newWatchState, pass, type WatchDeps, type WatchSettings } from './watch-scheduler.js';

/**
 * Pushes without events (remote mode): the interface has none, so the bot polls the card service for what
 * is new and records it as outbox events (src/core/operations/events.ts), which the bot's outbox loop pushes to every
 * chat linked to the user and deletes later, as for the embedded core.
 *
 * What is polled, for each linked user: the first page of transactions (4.12), every `pollSeconds` (and the
 * next pages while none on a page was seen before); and
 * the OTP list (4.13) of each card the bot knows (src/remote/known-cards.ts), every `pollSeconds`, or every
 * second while the card is watched ("waiting for a code"). Watched cards are polled ahead of the rest, in
 * their own lane of the request budget. The other polls are taken in rounds that alternate between users
 * (each user's transactions, then up to `perUserPerRound` of its cards), so a user with a thousand cards
 * does not hold up the others; only a few are waiting for the budget at a time (`backgroundWindow`), so
 * a user's own request or a watched card is next in line.
 *
 * Once and only once: each new item's `bot_remote_seen` row and its outbox event are written in one
 * transaction, and only by whoever inserted the row (`on conflict do nothing`), so instances polling at
 * once record it once. A poll is claimed before it is made (its time set if nobody set it since it was
 * read), so instances share the polling rather than repeat it. The first poll of a user or of a card it
 * did not create takes what is there as history: marked seen, not pushed.
 *
 * The user ids are the caller's; an outbox row refers to a row of `users`, so each must be one (or the
 * wiring relaxes that reference for remote mode).
 *
 * The user's own operations are not news: while the bot's top-up, withdrawal or close of a card is under
 * way (`known.beginOwn`, from any instance), no transaction of that card on that side is recorded; once its
 * answer is back its transaction is marked seen (`known.settleOwn`), so it is never pushed.
 *
 * A card the service does not find is forgotten. A 401 is asked about again (`tokenRefusalConfirmed`): a
 * token refused twice calls `onTokenRefused` once and that user is skipped until the token is linked again
 * (`takeUser`, or `users` listing it with a link made since, or no longer listing it); one refused once is
 * polled on. A busy or failing service (429, 5xx, no answer) pauses every poll for its `Retry-After`, else
 * for a back-off doubling from a second.
 *
 * Here the watch is assembled and run on the background loop (src/infra/loop.ts), a pass every `tickMs`;
 * the scheduler is `watch-scheduler.ts`, the polls `poll-otps.ts` and `poll-transactions.ts`, what was seen
 * `seen.ts`.
 */
export interface RemoteWatchOptions {
  /** The handle the bot's outbox loop is woken through (`announcingCommits`). */
  db: Db;
  client: RemoteCardClient;
  clock: Clock;
  logger: Logger;
  /**
   * The linked users and their tokens, read every `usersRefreshMs` and on `wake`; `linkedAt` (ISO), the
   * newest of the user's links: one made after its token was refused has it polled again.
   */
  users: () => Promise<{ userId: string; token: string; linkedAt?: string }[]>;
  /** How often an unwatched card's OTPs and a user's transactions are read. */
  pollSeconds: number;
  /** The service refused this user's token (401): end the chat's link. Called once per token. */
  onTokenRefused: (userId: string) => void | Promise<void>;
  /** The request budget the client's `schedule` waits on: the watcher's requests take its lanes. */
  budget?: Pick<RequestBudget, 'run'>;
  /** How long a card is watched closely once asked to. 300 by default. */
  watchSeconds?: number;
  /** How often a watched card's OTPs are read. 1000 by default. */
  watchIntervalMs?: number;
  /** How often the watcher looks for due polls. 100 by default. */
  tickMs?: number;
  /** Background polls under way at once. 4 by default. */
  backgroundWindow?: number;
  /** A user's cards in one round of background polls. 10 by default. */
  perUserPerRound?: number;
  usersRefreshMs?: number;
  /** Transactions read a page. 100 (the interface's maximum) by default. */
  transactionPageSize?: number;
  /** The most pages of transactions one poll reads back to the last one seen. 10 by default. */
  transactionPages?: number;
  /** The longest pause after failures without a `Retry-After`. 60 s by default. */
  maxBackoffMs?: number;
  /** How long after a 401 the token is asked about again before it counts as refused. 500 by default. */
  confirmRefusalMs?: number;
}

export interface RemoteWatch {
  /** Stops polling and waits for the polls under way. */
  stop(): Promise<void>;
  /** Looks for due polls now (and reads the users again). */
  wake(): void;
  /** Watches a card closely for `watchSeconds` ("waiting for a code"). */
  watch(userId: string, cardId: string): Promise<void>;
  /**
   * Takes a user just linked, before the chat is told: its transactions so far are read now and taken as
   * history, so that whatever happens from then on is new (a first poll after a purchase would take the
   * purchase for history).
   */
  takeUser(userId: string, token: string): Promise<void>;
  /** The known cards, for the bot to remember the cards it creates or is given, and forget those it closes. */
  readonly known: ReturnType<typeof createKnownCards>;
}

export function startRemoteWatch(options: RemoteWatchOptions): RemoteWatch {
  const { db, clock, logger } = options;
  const pollMs = options.pollSeconds * 1000;
  const settings: WatchSettings = {
    pollMs,
    // A watched card is never polled less often than the others.
    watchMs: Math.min(options.watchIntervalMs ?? 1000, pollMs),
    tickMs: options.tickMs ?? 100,
    window: options.backgroundWindow ?? 4,
    perUser: options.perUserPerRound ?? 10,
    usersRefreshMs: options.usersRefreshMs ?? 5000,
    maxBackoffMs: options.maxBackoffMs ?? 60_000,
    confirmRefusalMs: options.confirmRefusalMs ?? CONFIRM_REFUSAL_DELAY_MS,
  };
  const state = newWatchState();
  let loop: Loop | undefined;
  const deps: WatchDeps = {
    db,
    client: options.client,
    clock,
    logger,
    known: createKnownCards(db),
    pageSize: options.transactionPageSize ?? 100,
    maxPages: options.transactionPages ?? 10,
    settings,
    state,
    users: options.users,
    onTokenRefused: options.onTokenRefused,
    answered: () => {
      state.backoffMs = 0;
    },
    inLane: (lane, work) => (options.budget ? options.budget.run(lane, work) : work()),
    wake: () => loop?.wake(),
  };
  // A pass that fails is logged and the next one comes at the next tick: the polls keep their own pause.
  loop = startLoop(settings.tickMs, logger, 'remote watch', undefined, async () => {
    try {
      await pass(deps);
    } catch (error) {
      logger.warn({ err: loggableError(error) }, 'remote watch: a pass failed');
    }
    return undefined;
  });
  const wake = (forceUsers: boolean) => {
    if (forceUsers) state.forceUsers = true;
    loop?.wake();
  };

  return {
    async stop() {
      state.stopped = true;
      await loop?.stop();
      await Promise.allSettled([...state.underWay]);
    },
    wake() {
      wake(true);
    },
    async takeUser(userId, token) {
      // Linked again: a token refused before is polled again.
      state.refused.delete(token);
      await deps.known.ensureUsers([userId]);
      const row = await remoteTables(db)
        .selectFrom('bot_remote_users')
        .select(['last_polled_at', 'baselined_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (row === undefined || row.baselined_at !== null) return;
      // In the user's own lane: the chat waits for it.
      await deps.inLane('user', () => pollTransactions(deps, { userId, lastPolledAt: row.last_polled_at }, token));
      wake(true);
    },
    async watch(userId, cardId) {
      const now = clock.now();
      await deps.known.watch(userId, cardId, now.getTime() + (options.watchSeconds ?? 300) * 1000, now);
      wake(false);
    },
    known: deps.known,
  };
}
