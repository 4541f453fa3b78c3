import { sql } from 'kysely';
import { pendingMigrations } from '../db/migrate.js';
import type { Db } from '../db/schema.js';

export type CheckState = 'ok' | 'failing';

export interface ReadinessChecks {
  database: CheckState;
  migrations: CheckState | 'pending';
  bot: CheckState | 'disabled';
  /** Remote mode only: the card service the bot stands in front of answers. */
  cardService?: CheckState;
}

/**
 * What `/readyz` checks: the database answers `select 1`; no migration is pending (`pendingMigrations`,
 * in the process's own schema on Postgres too); the bot, when it runs in this process, has
 * reached Telegram (`botReady`, absent when it does not run here).
 */
export function createReadiness(db: Db, botReady?: () => boolean, cardServiceReady?: () => Promise<boolean>) {
  // Migrations are never undone under a running process: once all are applied, that is not asked again.
  let migrated = false;

  async function migrationsState(): Promise<CheckState | 'pending'> {
    if (migrated) return 'ok';
    migrated = (await pendingMigrations(db)).length === 0;
    return migrated ? 'ok' : 'pending';
  }

  return async function check(): Promise<{ ready: boolean; checks: ReadinessChecks }> {
    let database: CheckState = 'ok';
    let migrations: ReadinessChecks['migrations'] = 'failing';
    try {
      await sql`select 1`.execute(db);
      migrations = await migrationsState().catch(() => 'failing' as const);
    } catch {
      database = 'failing';
    }
    const bot: ReadinessChecks['bot'] = botReady === undefined ? 'disabled' : botReady() ? 'ok' : 'failing';
    const ready = database === 'ok' && migrations === 'ok' && bot !== 'failing';
    if (cardServiceReady === undefined) return { ready, checks: { database, migrations, bot } };
    const cardService: CheckState = (await cardServiceReady().catch(() => false)) ? 'ok' : 'failing';
    return { ready: ready && cardService === 'ok', checks: { database, migrations, bot, cardService } };
  };
}
