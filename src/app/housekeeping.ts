import { purgeExpiredIdempotencyKeys } from '../api/idempotency-store.js';
import type { CoreRuntime } from './compose.js';
import { loggableError } from '../infra/log-safe.js';
import type { Logger } from '../infra/logger.js';
import { startLoop } from '../infra/loop.js';

const EVERY_MS = 10 * 60_000;

/**
 * What every service process does now and then, whether or not it runs the bot: OTP codes past their
 * retention and the outbox's delivered or stale rows are deleted (so the outbox stays bounded when no
 * bot consumes it); operations a crash left waiting on the card provider are settled (asking a provider
 * that remembers, Lithic, what became of them first); card
 * authorizations held past `AUTHORIZATION_HOLD_DAYS` are released, and spent single-use cards whose closure
 * failed are closed. Runs at
 * once, then every ten minutes, on the loop the bot's jobs run on; `stop` waits for a run in progress.
 */
export function startHousekeeping(
  runtime: Pick<CoreRuntime, 'admin' | 'database' | 'clock'>,
  logger: Logger,
  everyMs = EVERY_MS,
): { stop(): Promise<void> } {
  const purge = async () => {
    const purged = await runtime.admin.purgeExpired();
    if (purged.otps + purged.outbox + purged.mailbox > 0) logger.debug({ purged }, 'purged expired OTP codes and outbox rows');
  };
  const recover = async () => {
    // Kinds, amounts and times only: no card data.
    const recovered = await runtime.admin.recoverInterrupted();
    if (recovered.length > 0) logger.warn({ operations: recovered }, 'settled interrupted provider operations');
  };
  const expire = async () => {
    // Holds of card authorizations past AUTHORIZATION_HOLD_DAYS released (their lines Reversed).
    const expired = await runtime.admin.expireAuthorizations();
    if (expired > 0) logger.info({ expired }, 'released expired authorization holds');
    // Single-use cards a failed closure left open after their first clearing: counts only, no card data.
    const spent = await runtime.admin.closeSpentSingleUseCards();
    if (spent.closed > 0) logger.info(spent, 'closed spent single-use cards');
    if (spent.failed > 0) logger.warn(spent, 'closing spent single-use cards failed; retrying on the next sweep');
  };
  const loop = startLoop(
    everyMs,
    logger,
    'housekeeping',
    undefined,
    async () => {
      // Each task on its own: one failing does not hold the other back.
      await Promise.all(
        [purge, recover, expire].map((task) =>
          task().catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'housekeeping failed; retrying later')),
        ),
      );
      return undefined;
    },
    { unref: true },
  );
  return { stop: () => loop.stop() };
}

const IDEMPOTENCY_PURGE_EVERY_MS = 3_600_000;

/**
 * The `Idempotency-Key` replies past their time deleted hourly (the first run an hour after the start), in
 * a process that serves the HTTP API, on the same loop; `stop` waits for a run in progress.
 */
export function startIdempotencyPurge(runtime: Pick<CoreRuntime, 'database' | 'clock'>, logger: Logger): { stop(): Promise<void> } {
  const loop = startLoop(
    IDEMPOTENCY_PURGE_EVERY_MS,
    logger,
    'idempotency purge',
    undefined,
    async () => {
      await purgeExpiredIdempotencyKeys(runtime.database.db, runtime.clock.now()).catch((error: unknown) =>
        logger.warn({ err: error }, 'Purging idempotency keys failed'),
      );
      return undefined;
    },
    { unref: true, later: true },
  );
  return { stop: () => loop.stop() };
}
