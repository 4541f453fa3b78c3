import { PostgresAdapter, sql, type Transaction } from 'kysely';
import { compiledOnce } from '../db/compiled-query.js';
import type { Database } from '../db/schema.js';
import { createCardOperations } from './operations/cards.js';
import type { CoreDeps, OperationDeps } from './deps.js';
import { CardServiceError } from './rules/errors.js';
import { createEventOutbox } from './operations/events.js';
import { createHistoryOperations } from './operations/history.js';
import { createMovementOperations } from './operations/movements.js';
import { inputGuards } from './rules/schemas.js';
import { hashToken } from './keys/secrets.js';
import { systemAccountIds } from './ledger/ledger.js';
import { createPendingOperations } from './operations/pending-operations.js';
import { createCooldowns } from './rules/cooldowns.js';
import { toBin, toPlan, type Bin, type Caller, type Health, type Plan } from './operations/views.js';

const callerByTokenHash = compiledOnce(1, (ex, tokenHash: string) =>
  ex
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .select([
      'users.id as userId',
      'users.wallet_account_id as walletAccountId',
      'api_tokens.id as tokenId',
      'api_tokens.last_used_at as lastUsedAt',
    ])
    .where('api_tokens.token_hash', '=', tokenHash)
    .where('api_tokens.revoked_at', 'is', null),
);

const recordUse = compiledOnce(2, (ex, tokenId: string, at: string) =>
  ex.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', tokenId),
);

/** A token's last use is written at most this often: a write per request would make every read a write. */
const LAST_USE_RESOLUTION_MS = 60_000;
/** Tokens whose last write this process remembers; past that it forgets them all (a few writes twice, no harm). */
const MAX_REMEMBERED_USES = 10_000;

/**
 * The card service: every operation of the interface as a function of a caller. The HTTP API and
 * the bot both call this and nothing below it.
 *
 * @example
 * const core = createCardService(deps);
 * const caller = await core.authenticate(token);
 * const result = await core.topup(caller, cardId, core.schemas.topup.parse({ amount: 25 }));
 */
export function createCardService(deps: CoreDeps) {
  const { db, clock, settings } = deps;
  const systemAccounts = systemAccountIds();
  const operationDeps: OperationDeps = {
    ...deps,
    systemAccounts,
    onPostgres: db.getExecutor().adapter instanceof PostgresAdapter,
    pending: createPendingOperations(db, clock, systemAccounts),
    cooldowns: createCooldowns(settings),
  };

  // When this process last wrote (or began writing) each token's last use. Requests that read the row
  // before that write committed leave it be: 50 requests crossing the minute at once write once, not 50 times.
  const useWrittenAt = new Map<string, number>();

  /** The caller behind a token's hash; its last use is recorded (at most once a minute). Runs on every request: compiled once. */
  async function authenticateByTokenHash(tokenHash: string): Promise<Caller> {
    const { rows } = await callerByTokenHash.execute(db, tokenHash);
    const row = rows[0];
    if (!row) throw new CardServiceError('INVALID_TOKEN');
    const now = clock.now().getTime();
    const lastUse = Math.max(row.lastUsedAt === null ? -Infinity : Date.parse(row.lastUsedAt), useWrittenAt.get(row.tokenId) ?? -Infinity);
    if (now - lastUse >= LAST_USE_RESOLUTION_MS) {
      if (useWrittenAt.size >= MAX_REMEMBERED_USES) useWrittenAt.clear();
      useWrittenAt.set(row.tokenId, now);
      try {
        await recordUse.execute(db, row.tokenId, new Date(now).toISOString());
      } catch (error) {
        useWrittenAt.delete(row.tokenId);
        throw error;
      }
    }
    return { userId: row.userId, walletAccountId: Number(row.walletAccountId) };
  }

  return {
    schemas: inputGuards(settings).schemas,
    settings,
    events: createEventOutbox(db, deps.committedEvents),
    ...createCardOperations(operationDeps),
    ...createMovementOperations(operationDeps),
    ...createHistoryOperations(deps),

    /** The caller an API token stands for; a missing, unknown or revoked token is refused. */
    async authenticate(token: string | undefined): Promise<Caller> {
      if (!token) throw new CardServiceError('INVALID_TOKEN');
      return authenticateByTokenHash(hashToken(token));
    },

    /** Like `authenticate`, for an edge that keeps only the token's hash (the bot's chat links). */
    authenticateByTokenHash,

    /** Whether a token (by its hash) still works, without counting as a use of it (a push to its chat). */
    async tokenIsActive(tokenHash: string): Promise<boolean> {
      return (await callerByTokenHash.execute(db, tokenHash)).rows.length > 0;
    },

    async health(): Promise<Health> {
      await sql`select 1`.execute(db);
      return { status: 'healthy', environment: settings.environment, timestamp: clock.now().toISOString() };
    },

    /** Spec 4.2: enabled BINs only. */
    async listBins(): Promise<Bin[]> {
      const rows = await db.selectFrom('bins').selectAll().where('enabled', '=', 1).orderBy('created_at').orderBy('bin').execute();
      return rows.map(toBin);
    },

    /** Spec 4.3: active plans, cheapest first. */
    async listPlans(): Promise<Plan[]> {
      const rows = await db.selectFrom('plans').selectAll().where('active', '=', 1).orderBy('limit_amount').orderBy('id').execute();
      return rows.map(toPlan);
    },
  };
}

export type CardService = ReturnType<typeof createCardService>;

/**
 * Lets an edge write a record of its own in an operation's transaction, so that the two commit or
 * roll back together (the HTTP API stores its `Idempotency-Key` replies this way). Optional last
 * argument of `createCard`, `topup`, `withdraw` and `requestOtp`.
 */
export interface OperationHooks<R> {
  /** Runs last inside the operation's transaction, once it has succeeded; throwing rolls the whole operation back. */
  commit?: (trx: Transaction<Database>, result: R) => Promise<void>;
}
