import { promises as fs } from 'node:fs';
import { sql } from 'kysely';
import { MIGRATIONS_FOLDER } from '../db/migrate.js';
import type { Db } from '../db/schema.js';

export type CheckState = 'ok' | 'failing';

export interface ReadinessChecks {
  database: CheckState;
  migrations: CheckState | 'pending';
  bot: CheckState | 'disabled';
}

/**
 * What `/readyz` checks: the database answers `select 1`; every migration in the migrations folder is
 * recorded as applied (Kysely's `kysely_migration` table); the bot, when it runs in this process, has
 * reached Telegram (`botReady`, absent when it does not run here).
 */
export function createReadiness(db: Db, botReady?: () => boolean, migrationsFolder = MIGRATIONS_FOLDER) {
  // Migrations are never undone under a running process: once all are applied, that is not asked again.
  let migrated = false;
  let expected: Promise<string[]> | undefined;
  const migrationNames = () =>
    (expected ??= fs.readdir(migrationsFolder).then((files) =>
      files.filter((f) => /\.(?:[cm]?js|ts)$/.test(f) && !f.endsWith('.d.ts')).map((f) => f.replace(/\.[^.]+$/, '')),
    ));

  async function migrationsState(): Promise<CheckState | 'pending'> {
    if (migrated) return 'ok';
    const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const done = new Set(applied.rows.map((r) => r.name));
    const names = await migrationNames();
    migrated = names.every((n) => done.has(n));
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
    return { ready: database === 'ok' && migrations === 'ok' && bot !== 'failing', checks: { database, migrations, bot } };
  };
}
