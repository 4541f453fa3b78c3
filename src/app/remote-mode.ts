import { linkedRemoteUsers, remoteCardService } from '../bot/card-service/remote.js';
import { endLinksOfUser } from '../bot/store/link-ends.js';
import type { CardServicePort } from '../bot/card-service/port.js';
import type { CoreRuntime } from './compose.js';
import type { Config } from './config.js';
import { createAccount } from '../core/ledger/ledger.js';
import type { Db } from '../db/schema.js';
import type { Logger } from '../infra/logger.js';
import type { Redis } from '../infra/redis.js';
import { createRemoteCardClient } from '../remote/client.js';
import { createRequestBudget } from '../remote/budget.js';
import { createKnownCards } from '../remote/known-cards.js';
import { serviceHealth } from '../remote/service-health.js';
import { startRemoteWatch } from '../remote/watch.js';
import { WindowCounts } from '../infra/window-counts.js';

/**
 * The outbox the bot pushes from keys its events by a user of the core's `users` table: a remote user gets
 * a row there (and the empty wallet account each user row names), made once, never used for money.
 */
async function ensurePushTarget(db: Db, userId: string, at: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const known = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
    if (known) return;
    const wallet = await createAccount(trx, 'wallet', at.toISOString());
    await trx
      .insertInto('users')
      .values({ id: userId, name: 'remote', wallet_account_id: wallet, created_at: at.toISOString() })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  });
}

/** How long past its request's timeout (twice: a turn in the budget, then the request) an own operation holds its card's transactions back. */
const OWN_HOLD_MARGIN_MS = 30_000;

/** What remote mode adds to a process: the card service the bot stands in front of, and `/readyz`'s look at it. */
export interface RemoteMode {
  cards: CardServicePort;
  cardServiceReady(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Remote mode (`CARD_SERVICE_URL`): the bot in front of another service that speaks the interface. The
 * process's database keeps only the bot's own state (links with their tokens sealed, flows, known cards,
 * what was pushed); no wallet, card or `/api/v1` of ours is served.
 */
export function startRemoteMode(config: Config, runtime: CoreRuntime, logger: Logger, redis?: Redis): RemoteMode {
  const baseUrl = config.CARD_SERVICE_URL!;
  const log = logger.child({ component: 'card-service' });
  const health = serviceHealth({ baseUrl, logger: log, timeoutMs: config.CARD_SERVICE_TIMEOUT_MS });
  // One budget for every request to the service: a user's own first, then watched cards, then the background
  // polls; with Redis, one for every instance together.
  const budget = createRequestBudget({
    maxPerSecond: config.CARD_SERVICE_MAX_RPS,
    ...(redis ? { shared: new WindowCounts(redis, log) } : {}),
  });
  const client = createRemoteCardClient({
    baseUrl,
    timeoutMs: config.CARD_SERVICE_TIMEOUT_MS,
    observe: health,
    schedule: budget.schedule,
  });
  const db = runtime.database.db;
  const known = createKnownCards(db);
  // No events at the service: new OTPs and transactions are found by polling, and recorded in the outbox the bot pushes from.
  const watch = startRemoteWatch({
    db,
    client,
    clock: runtime.clock,
    logger: log,
    budget,
    pollSeconds: config.CARD_SERVICE_POLL_SECONDS,
    users: () => linkedRemoteUsers(db, runtime.cipher, log),
    onTokenRefused: async (userId) => {
      await endLinksOfUser(db, userId, runtime.clock.now());
    },
  });
  const cards = remoteCardService({
    client,
    events: runtime.core.events,
    watch: (userId, cardId) => watch.watch(userId, cardId),
    onLinked: async (userId, token) => {
      await ensurePushTarget(db, userId, runtime.clock.now());
      // A service that does not answer now is not a reason to refuse the link: the first poll takes the history then.
      await watch
        .takeUser(userId, token)
        .catch((error: unknown) =>
          log.warn({ reason: (error as Error).message }, "remote watch: a new user's history was not read at link"),
        );
      watch.wake();
    },
    db: runtime.database.db,
    clock: runtime.clock,
    logger: log,
    cipher: runtime.cipher,
    known: {
      remember: async (userId, cardId, options) => {
        await known.remember(userId, cardId, runtime.clock.now(), options);
        watch.wake();
      },
      forget: (userId, cardId) => known.forget(userId, cardId),
      list: async (userId) => (await known.list(userId)).map((card) => card.cardId),
      planOf: (userId, cardId) => known.planOf(userId, cardId),
      rememberPlan: (userId, cardId, plan) => known.rememberPlan(userId, cardId, plan, runtime.clock.now()),
      noteWithdrawalAttempt: (userId, cardId, at) => known.noteWithdrawalAttempt(userId, cardId, at),
      withdrawalAttemptOf: (userId, cardId) => known.withdrawalAttemptOf(userId, cardId),
      // Held while the request may still be waiting for its turn and its answer; an instance stopped mid-request lets go then.
      beginOwn: (userId, cardId, side) =>
        known.beginOwn(userId, cardId, side, runtime.clock.now().getTime() + 2 * config.CARD_SERVICE_TIMEOUT_MS + OWN_HOLD_MARGIN_MS),
      // The movement is done whatever this write does: a failure leaves its transaction to be pushed once the hold ends.
      settleOwn: (operationId, userId, transactionId) =>
        known
          .settleOwn(operationId, userId, transactionId, runtime.clock.now())
          .catch((error: unknown) => log.warn({ reason: (error as Error).message }, "remote mode: an own operation's end was not written")),
    },
  });
  log.info({ service: new URL(baseUrl).host }, 'remote mode: the bot stands in front of the card service');
  return { cards, cardServiceReady: () => health.ready(), stop: () => watch.stop() };
}
