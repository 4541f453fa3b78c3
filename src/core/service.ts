import { PostgresAdapter, sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { createCardOperations } from './operations/cards.js';
import { createControlOperations } from './operations/card-controls.js';
import type { CoreDeps, OperationDeps } from './deps.js';
import { CardServiceError } from './rules/errors.js';
import { createEventOutbox } from './operations/events.js';
import { createAuthentication } from './operations/authentication.js';
import { createHistoryOperations } from './operations/history.js';
import { createChallengeOperations } from './operations/challenges.js';
import { createMovementOperations } from './operations/movements.js';
import { createAuthorizationOperations } from './authorization/engine.js';
import { createPortableMoneyStore } from './money-store/portable/store.js';
import { createPostgresMoneyStore } from './money-store/postgres/store.js';
import { inputGuards } from './rules/schemas.js';
import { hashToken } from './keys/secrets.js';
import { systemAccountIds } from './ledger/ledger.js';
import { createPendingOperations } from './operations/pending-operations.js';
import { createCooldowns } from './rules/cooldowns.js';
import { toBin, toPlan, type Bin, type Caller, type Health, type Plan } from './operations/views.js';

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
  const authentication = createAuthentication(db, clock);
  const storeDeps = {
    ...deps,
    systemAccounts,
    authentication,
    pending: createPendingOperations(db, clock, systemAccounts, { provider: deps.provider, cipher: deps.cipher }),
    cooldowns: createCooldowns(settings),
  };
  // The money store, chosen once: on Postgres each transaction is one statement, falling back to the
  // portable steps in the rare cases a statement leaves to them.
  const portable = createPortableMoneyStore(storeDeps);
  const onPostgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const operationDeps: OperationDeps = {
    ...storeDeps,
    money: onPostgres ? createPostgresMoneyStore(storeDeps, portable) : portable,
  };

  return {
    schemas: inputGuards(settings).schemas,
    settings,
    events: createEventOutbox(db, deps.committedEvents),
    ...createCardOperations(operationDeps),
    ...createControlOperations(operationDeps),
    ...createMovementOperations(operationDeps),
    ...createHistoryOperations(operationDeps),
    ...createAuthorizationOperations(operationDeps),
    ...createChallengeOperations(operationDeps),

    /** The caller an API token stands for; a missing, unknown or revoked token is refused. */
    async authenticate(token: string | undefined): Promise<Caller> {
      if (!token) throw new CardServiceError('INVALID_TOKEN');
      return authentication.byTokenHash(hashToken(token));
    },

    /** Like `authenticate`, for an edge that keeps only the token's hash (the bot's chat links). */
    authenticateByTokenHash: authentication.byTokenHash,

    /** Whether a token (by its hash) still works, without counting as a use of it (a push to its chat). */
    async tokenIsActive(tokenHash: string): Promise<boolean> {
      return authentication.isActive(tokenHash);
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
