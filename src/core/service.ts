import { sql } from 'kysely';
import { compiledOnce } from '../db/compiled-query.js';
import { createCardOperations } from './cards.js';
import type { CoreDeps } from './deps.js';
import { CardServiceError } from './errors.js';
import { createEventOutbox } from './events.js';
import { createHistoryOperations } from './history.js';
import { createMovementOperations } from './movements.js';
import { inputGuards } from './schemas.js';
import { hashToken } from './secrets.js';
import { toBin, toPlan, type Bin, type Caller, type Health, type Plan } from './views.js';

const callerByTokenHash = compiledOnce(1, (ex, tokenHash: string) =>
  ex
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .select(['users.id as userId', 'users.wallet_account_id as walletAccountId'])
    .where('api_tokens.token_hash', '=', tokenHash)
    .where('api_tokens.revoked_at', 'is', null),
);

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
  return {
    schemas: inputGuards(settings).schemas,
    settings,
    events: createEventOutbox(db),
    ...createCardOperations(deps),
    ...createMovementOperations(deps),
    ...createHistoryOperations(deps),

    /** The caller an API token stands for; a missing, unknown or revoked token is refused. */
    async authenticate(token: string | undefined): Promise<Caller> {
      if (!token) throw new CardServiceError('INVALID_TOKEN');
      const row = await db
        .selectFrom('api_tokens')
        .innerJoin('users', 'users.id', 'api_tokens.user_id')
        .select(['users.id as userId', 'users.wallet_account_id as walletAccountId'])
        .where('api_tokens.token_hash', '=', hashToken(token))
        .where('api_tokens.revoked_at', 'is', null)
        .executeTakeFirst();
      if (!row) throw new CardServiceError('INVALID_TOKEN');
      return row;
    },

    /** Like `authenticate`, for an edge that keeps only the token's hash (the bot's chat links). */
    async authenticateByTokenHash(tokenHash: string): Promise<Caller> {
      // Runs on every bot update: compiled once.
      const { rows } = await callerByTokenHash.execute(db, tokenHash);
      const row = rows[0];
      if (!row) throw new CardServiceError('INVALID_TOKEN');
      return { userId: row.userId, walletAccountId: Number(row.walletAccountId) };
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
