import type { Logger } from 'pino';
import type { Clock } from '../infra/clock.js';
import { CardServiceError } from '../core/rules/errors.js';
import { recordEvent, type CardTransactionEvent, type OtpEvent } from '../core/operations/events.js';
import type { Cents } from '../core/ledger/money.js';
import type { Db, Executor } from '../db/schema.js';
import { getOrCreate } from '../infra/get-or-create.js';
import { loggableError } from '../infra/log-safe.js';
import type { Lane, RequestBudget } from './budget.js';
import { ServiceUnavailableError, type RemoteCardClient } from './client.js';
import { createKnownCards, ownKey, remoteTables, type DueCard, type DueUser } from './known-cards.js';
import type { RemoteOtp, RemoteTransaction, TransactionPage } from './shapes.js';
import { CONFIRM_REFUSAL_DELAY_MS, tokenRefusalConfirmed } from './token-refusal.js';

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

type Job = { kind: 'card'; due: DueCard } | { kind: 'transactions'; due: DueUser };

const keyOf = (job: Job) => (job.kind === 'card' ? `${job.due.userId}\u0000${job.due.cardId}` : `${job.due.userId}\u0000`);

export function startRemoteWatch(options: RemoteWatchOptions): RemoteWatch {
  const { db, client, clock, logger } = options;
  const pollMs = options.pollSeconds * 1000;
  // A watched card is never polled less often than the others.
  const watchMs = Math.min(options.watchIntervalMs ?? 1000, pollMs);
  const tickMs = options.tickMs ?? 100;
  const window = options.backgroundWindow ?? 4;
  const perUser = options.perUserPerRound ?? 10;
  const usersRefreshMs = options.usersRefreshMs ?? 5000;
  const pageSize = options.transactionPageSize ?? 100;
  const maxPages = options.transactionPages ?? 10;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const known = createKnownCards(db);
  const inLane = <T>(lane: Lane, work: () => Promise<T>) => (options.budget ? options.budget.run(lane, work) : work());

  let stopped = false;
  /** Linked users not refused: user id → token. */
  let users = new Map<string, string>();
  let usersReadAt = Number.NEGATIVE_INFINITY;
  /**
   * Tokens refused (a 401, asked again): token → when, as the clock says, just before its links were ended.
   * Kept only while the users read still list the token (its old links not yet seen ended); a user listed
   * with a link made after that is linked again (here or on another instance), and is polled again.
   */
  const refused = new Map<string, number>();
  /** Tokens whose 401 is being asked about again. */
  const confirming = new Set<string>();
  let pausedUntil = 0;
  let prunedAt = Number.NEGATIVE_INFINITY;
  let backoffMs = 0;
  let round: Job[] = [];
  let roundBuiltAt = Number.NEGATIVE_INFINITY;
  let rotation = 0;
  let background = 0;
  /** Polls under way, by card (or user's transactions): one at a time each. */
  const busy = new Set<string>();
  const underWay = new Set<Promise<void>>();
  let wakeUp: ((forced?: boolean) => void) | undefined;

  async function readUsers(nowMs: number, force: boolean): Promise<void> {
    if (!force && nowMs - usersReadAt < usersRefreshMs) return;
    usersReadAt = nowMs;
    try {
      const listed = await options.users();
      const next = new Map<string, string>();
      for (const { userId, token, linkedAt } of listed) {
        const refusedAt = refused.get(token);
        if (refusedAt !== undefined && linkedAt !== undefined && Date.parse(linkedAt) > refusedAt) refused.delete(token);
        if (!refused.has(token)) next.set(userId, token);
      }
      // A refused token no longer listed (its links ended) is forgotten: linked again, it is polled.
      const tokens = new Set(listed.map((u) => u.token));
      for (const token of refused.keys()) if (!tokens.has(token)) refused.delete(token);
      const added = [...next.keys()].filter((id) => !users.has(id));
      await known.ensureUsers(added);
      users = next;
    } catch (error) {
      logger.warn({ err: loggableError(error) }, 'remote watch: the linked users could not be read; kept the last list');
    }
  }

  /** The next round of background polls: users in turn, each its transactions then some of its cards. */
  async function buildRound(ids: string[], nowMs: number): Promise<Job[]> {
    const perUserJobs = new Map<string, Job[]>();
    const jobsOf = (userId: string) => getOrCreate(perUserJobs, userId, (): Job[] => []);
    for (const due of await known.dueUsers(ids, nowMs, pollMs)) jobsOf(due.userId).push({ kind: 'transactions', due });
    for (const due of await known.dueCards(ids, nowMs, { pollMs, watchMs })) {
      if (due.watched) continue;
      const jobs = jobsOf(due.userId);
      if (jobs.filter((j) => j.kind === 'card').length < perUser) jobs.push({ kind: 'card', due });
    }
    const order = [...perUserJobs.keys()].sort();
    const start = order.length === 0 ? 0 : rotation++ % order.length;
    const turns = [...order.slice(start), ...order.slice(0, start)].map((id) => perUserJobs.get(id)!);
    const out: Job[] = [];
    for (let i = 0; turns.some((jobs) => i < jobs.length); i++) for (const jobs of turns) if (i < jobs.length) out.push(jobs[i]!);
    return out;
  }

  function launch(job: Job, lane: Lane): void {
    const token = users.get(job.due.userId);
    const key = keyOf(job);
    if (token === undefined || busy.has(key)) return;
    busy.add(key);
    if (lane === 'background') background++;
    const run = (async () => {
      try {
        await inLane(lane, () => (job.kind === 'card' ? pollCard(job.due, token) : pollTransactions(job.due, token)));
      } catch (error) {
        await failed(error, job, token);
      } finally {
        busy.delete(key);
        if (lane === 'background') background--;
        // A free place in the window: fill it now rather than at the next tick.
        if (lane === 'background' && !stopped) wakeUp?.();
      }
    })();
    underWay.add(run);
    void run.finally(() => underWay.delete(run));
  }

  async function pass(force: boolean): Promise<void> {
    const nowMs = clock.now().getTime();
    if (nowMs - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = nowMs;
      await pruneSeen(db, new Date(nowMs), pageSize * maxPages);
      await known.pruneOwn(nowMs);
    }
    if (nowMs < pausedUntil) return;
    await readUsers(nowMs, force);
    const ids = [...users.keys()];
    if (ids.length === 0) return;
    for (const due of await known.dueCards(ids, nowMs, { pollMs, watchMs, watchedOnly: true })) launch({ kind: 'card', due }, 'watched');
    while (background < window && !stopped) {
      if (round.length === 0) {
        if (nowMs - roundBuiltAt < Math.max(tickMs, 250)) break;
        roundBuiltAt = nowMs;
        round = await buildRound(ids, nowMs);
        if (round.length === 0) break;
      }
      const job = round.shift()!;
      // A watched card is polled in its own lane; a user gone or refused since the round was built is skipped.
      if (job.kind === 'card' && job.due.watched) continue;
      launch(job, 'background');
    }
  }

  const loop = (async () => {
    let force = true;
    while (!stopped) {
      try {
        await pass(force);
      } catch (error) {
        logger.warn({ err: loggableError(error) }, 'remote watch: a pass failed');
      }
      force = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), tickMs);
        wakeUp = (forced = false) => {
          clearTimeout(timer);
          wakeUp = undefined;
          resolve(forced);
        };
      });
    }
  })();

  function succeeded(): void {
    backoffMs = 0;
  }

  async function failed(error: unknown, job: Job, token: string): Promise<void> {
    const userId = job.due.userId;
    if (error instanceof CardServiceError && error.code === 'INVALID_TOKEN') {
      if (refused.has(token) || confirming.has(token)) return;
      // One 401 is not forever (a service restarting, a proxy's hiccup): the token is asked about again.
      confirming.add(token);
      let confirmed: boolean;
      try {
        confirmed = await inLane(job.kind === 'card' && job.due.watched ? 'watched' : 'background', () =>
          tokenRefusalConfirmed(client.as(token), options.confirmRefusalMs ?? CONFIRM_REFUSAL_DELAY_MS),
        );
      } finally {
        confirming.delete(token);
      }
      if (!confirmed) {
        logger.info({ userId }, 'remote watch: the service refused the token once, then not; polls go on');
        return;
      }
      if (refused.has(token)) return;
      refused.set(token, clock.now().getTime());
      if (users.get(userId) === token) users.delete(userId);
      round = round.filter((j) => j.due.userId !== userId);
      logger.info({ userId }, 'remote watch: the service refused the token twice; no more polls for this user until it is linked again');
      try {
        await options.onTokenRefused(userId);
      } catch (cause) {
        logger.warn({ userId, err: loggableError(cause) }, 'remote watch: onTokenRefused failed');
      }
      return;
    }
    if (error instanceof CardServiceError && error.code === 'CARD_NOT_FOUND' && job.kind === 'card') {
      logger.info({ userId, cardId: job.due.cardId }, 'remote watch: the service does not find the card; forgotten');
      await known.forget(userId, job.due.cardId);
      return;
    }
    if (error instanceof ServiceUnavailableError) {
      backoffMs = error.retryAfterMs ?? Math.min(maxBackoffMs, backoffMs === 0 ? 1000 : backoffMs * 2);
      pausedUntil = Math.max(pausedUntil, clock.now().getTime() + backoffMs);
      logger.warn({ status: error.status, pauseMs: backoffMs }, 'remote watch: the card service is busy or failing; polls paused');
      return;
    }
    logger.warn({ userId, err: loggableError(error) }, 'remote watch: a poll failed');
  }

  /** The request of a claimed poll: a service that did not answer gives the claim back, so the poll is not lost till the next interval. */
  async function claimedRequest<T>(request: () => Promise<T>, release: () => Promise<void>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof ServiceUnavailableError) await release().catch(() => undefined);
      throw error;
    }
  }

  async function pollCard(due: DueCard, token: string): Promise<void> {
    const at = clock.now();
    if (!(await known.claimCard(due, at))) return;
    const { otps, cardInfo } = await claimedRequest(
      () => client.as(token).listOtps(due.cardId),
      () => known.releaseCard(due, at),
    );
    succeeded();
    await recordOtps(due.userId, due.cardId, otps, cardInfo?.nickname ?? '');
  }

  async function recordOtps(userId: string, cardId: string, otps: RemoteOtp[], nickname: string): Promise<void> {
    const tables = remoteTables(db);
    const card = await tables
      .selectFrom('bot_remote_cards')
      .select('baselined_at')
      .where('user_id', '=', userId)
      .where('card_id', '=', cardId)
      .executeTakeFirst();
    if (!card) return;
    const seen = await seenAmong(
      userId,
      'otp',
      otps.map((o) => o.id),
    );
    if (card.baselined_at !== null && otps.every((o) => seen.has(o.id))) return;
    const oldestFirst = otps
      .map((otp, index) => ({ otp, index }))
      .sort((a, b) => a.otp.createdAt.localeCompare(b.otp.createdAt) || a.index - b.index)
      .map((o) => o.otp);
    await db.transaction().execute(async (trx) => {
      const t = remoteTables(trx);
      const at = clock.now().toISOString();
      const baseline = await t
        .updateTable('bot_remote_cards')
        .set({ baselined_at: at })
        .where('user_id', '=', userId)
        .where('card_id', '=', cardId)
        .where('baselined_at', 'is', null)
        .executeTakeFirst();
      const history = Number(baseline.numUpdatedRows) === 1;
      for (const otp of oldestFirst) {
        if (!(await markSeen(trx, userId, 'otp', otp.id, at)) || history || isStale(otp.createdAt, at)) continue;
        const event: OtpEvent = {
          kind: 'otp',
          otpId: otp.id,
          cardId,
          cardName: otp.cardName || nickname,
          maskedPan: otp.maskedPan,
          code: otp.code,
          amount: otp.amount,
          currency: otp.currency,
          merchantName: '',
          createdAt: otp.createdAt || at,
        };
        await recordEvent(trx, userId, event, at);
      }
    });
  }

  async function pollTransactions(due: DueUser, token: string): Promise<void> {
    const claimedAt = clock.now();
    if (!(await known.claimUser(due, claimedAt))) return;
    const session = client.as(token);
    const page = await claimedRequest(
      () => session.listTransactions({ page: 1, limit: pageSize }),
      () => known.releaseUser(due, claimedAt),
    );
    succeeded();
    const user = await remoteTables(db)
      .selectFrom('bot_remote_users')
      .select('baselined_at')
      .where('user_id', '=', due.userId)
      .executeTakeFirst();
    if (!user) return;
    const baselined = user.baselined_at !== null;
    const { items, seen } = await readBackToSeen(due.userId, session, page, baselined ? maxPages : 1);
    // The bot's own operation under way on a card: its transaction waits (not marked seen) until its answer
    // marks it seen. Read after the page: an operation settled since left its transaction seen, so not recorded.
    const unseen = items.filter((t) => !seen.has(t.id) && settled(t) !== undefined);
    const own = baselined && unseen.length > 0 ? await known.ownUnderWay(due.userId, clock.now().getTime()) : new Set<string>();
    const news = unseen.filter((t) => !own.has(ownKey(t.cardId, t.side)));
    if (baselined && news.length === 0) return;
    // The card's balance after each new transaction: its balance now, taken back through the later ones.
    const balances = new Map<string, Cents>();
    if (baselined) {
      for (const cardId of new Set(news.map((t) => t.cardId))) {
        let balance: Cents;
        try {
          balance = (await session.getCard(cardId)).balance;
        } catch (error) {
          if (!(error instanceof CardServiceError && error.code === 'CARD_NOT_FOUND')) throw error;
          balance = 0;
        }
        for (const t of items) {
          if (t.cardId !== cardId) continue;
          balances.set(t.id, balance);
          if (settled(t) === 'Approved') balance -= (t.side === 'Credit' ? 1 : -1) * Math.abs(t.amount);
        }
      }
    }
    await db.transaction().execute(async (trx) => {
      const t = remoteTables(trx);
      const at = clock.now().toISOString();
      const baseline = await t
        .updateTable('bot_remote_users')
        .set({ baselined_at: at })
        .where('user_id', '=', due.userId)
        .where('baselined_at', 'is', null)
        .executeTakeFirst();
      const history = Number(baseline.numUpdatedRows) === 1;
      // Baselined by another instance since it was read: the balances were not taken; the next poll pushes these.
      if (!history && !baselined) return;
      const known = createKnownCards(trx);
      const cards = new Set((history ? items : news).map((item) => item.cardId));
      for (const cardId of cards) await known.remember(due.userId, cardId, new Date(at));
      if (history) {
        for (const item of items) await markSeen(trx, due.userId, 'transaction', item.id, at);
        return;
      }
      for (const item of [...news].reverse()) {
        if (!(await markSeen(trx, due.userId, 'transaction', item.id, at)) || isStale(item.createdAt, at)) continue;
        const event: CardTransactionEvent = {
          kind: 'card_transaction',
          transactionId: item.id,
          cardId: item.cardId,
          cardName: item.cardName,
          maskedPan: item.maskedPan,
          status: settled(item)!,
          side: item.side,
          type: item.type,
          amount: Math.abs(item.amount),
          currency: item.currency,
          merchantName: item.merchantName,
          declineCode: item.declineCode,
          cardBalance: balances.get(item.id) ?? 0,
          createdAt: item.createdAt || at,
        };
        await recordEvent(trx, due.userId, event, at);
      }
    });
  }

  /**
   * The newest transactions back to the first one already seen: more than a page can come between two polls
   * (a busy card, a service that was down), and the older ones are then on the next pages. Read newest first,
   * up to `pages` pages; an item that moved to the next page while it was read is taken once.
   */
  async function readBackToSeen(
    userId: string,
    session: ReturnType<RemoteCardClient['as']>,
    first: TransactionPage,
    pages: number,
  ): Promise<{ items: RemoteTransaction[]; seen: Set<string> }> {
    const items = [...first.data];
    const seen = await seenAmong(
      userId,
      'transaction',
      items.map((t) => t.id),
    );
    let page = first;
    for (let number = 2; number <= Math.min(pages, page.pagination.totalPages); number++) {
      if (page.data.length === 0 || page.data.some((t) => seen.has(t.id))) break;
      page = await session.listTransactions({ page: number, limit: pageSize });
      const taken = new Set(items.map((t) => t.id));
      const more = page.data.filter((t) => !taken.has(t.id));
      items.push(...more);
      for (const id of await seenAmong(
        userId,
        'transaction',
        more.map((t) => t.id),
      ))
        seen.add(id);
    }
    return { items, seen };
  }

  async function seenAmong(userId: string, kind: 'otp' | 'transaction', ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await remoteTables(db)
      .selectFrom('bot_remote_seen')
      .select('item_id')
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .where('item_id', 'in', ids)
      .execute();
    return new Set(rows.map((r) => r.item_id));
  }

  return {
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      await Promise.allSettled([...underWay]);
    },
    wake() {
      wakeUp?.(true);
    },
    async takeUser(userId, token) {
      // Linked again: a token refused before is polled again.
      refused.delete(token);
      await known.ensureUsers([userId]);
      const row = await remoteTables(db)
        .selectFrom('bot_remote_users')
        .select(['last_polled_at', 'baselined_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (row === undefined || row.baselined_at !== null) return;
      // In the user's own lane: the chat waits for it.
      await inLane('user', () => pollTransactions({ userId, lastPolledAt: row.last_polled_at }, token));
      wakeUp?.(true);
    },
    async watch(userId, cardId) {
      const now = clock.now();
      await known.watch(userId, cardId, now.getTime() + (options.watchSeconds ?? 300) * 1000, now);
      wakeUp?.(false);
    },
    known,
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the seen rows of OTPs (and of transactions no longer among a user's newest) are kept. */
const SEEN_KEPT_MS = 30 * DAY_MS;
/** An item created longer ago than this is never pushed: it is one whose seen row was pruned, not news. */
const STALE_MS = 14 * DAY_MS;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Whether an item the service dates (`createdAt`, ISO) is too old to push; an undated item is not. */
function isStale(createdAt: string, at: string): boolean {
  const created = Date.parse(createdAt);
  return Number.isFinite(created) && Date.parse(at) - created > STALE_MS;
}

/**
 * Forgets the seen rows older than `SEEN_KEPT_MS`, except each user's newest `keepTransactions` transaction
 * rows: those are the transactions the first pages may still show, undated ones included, and a forgotten
 * one there would be pushed again. An older OTP or transaction that comes back is older than `STALE_MS`, so
 * it is taken as seen again, not pushed. Returns the rows deleted.
 */
export async function pruneSeen(db: Executor, now: Date, keepTransactions: number): Promise<number> {
  const cutoff = new Date(now.getTime() - SEEN_KEPT_MS).toISOString();
  const result = await remoteTables(db)
    .deleteFrom('bot_remote_seen as s')
    .where('s.seen_at', '<', cutoff)
    .where((eb) =>
      eb.or([
        eb('s.kind', '=', 'otp'),
        eb(
          's.item_id',
          'not in',
          eb
            .selectFrom('bot_remote_seen as k')
            .select('k.item_id')
            .whereRef('k.user_id', '=', 's.user_id')
            .where('k.kind', '=', 'transaction')
            .orderBy('k.seen_at', 'desc')
            .orderBy('k.item_id', 'desc')
            .limit(keepTransactions),
        ),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Inserts the item's seen row: true when this call inserted it (and so records its event). */
async function markSeen(ex: Executor, userId: string, kind: 'otp' | 'transaction', itemId: string, at: string): Promise<boolean> {
  const result = await remoteTables(ex)
    .insertInto('bot_remote_seen')
    .values({ user_id: userId, kind, item_id: itemId, seen_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'kind', 'item_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** A settled transaction's status as the bot shows it; undefined while it is not settled (it is pushed once it is). */
function settled(t: RemoteTransaction): 'Approved' | 'Declined' | undefined {
  const status = t.status.trim().toLowerCase();
  return status === 'approved' ? 'Approved' : status === 'declined' ? 'Declined' : undefined;
}
