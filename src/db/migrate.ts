import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DatabaseIntrospector,
  FileMigrationProvider,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresAdapter,
  sql,
} from 'kysely';

const HERE = fileURLToPath(import.meta.url);

/**
 * `migrations/` beside `src/`: the TypeScript sources under tsx, `dist/migrations` once compiled
 * (`dist/src/db/migrate.js`), so each layout runs its own kind of file.
 */
export const MIGRATIONS_FOLDER = path.resolve(path.dirname(HERE), '../../migrations');

/** The migrations' file extension in this layout: `.ts` from the sources, `.js` compiled. */
export const MIGRATION_EXTENSION = path.extname(HERE);

/**
 * Kysely's file provider, reading only the files of this layout's kind (`.ts` in development, `.js`
 * compiled): no declaration file, source map or stray source file is ever taken for a migration.
 */
class LayoutMigrationProvider implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    const only: typeof fs = {
      ...fs,
      readdir: (async (folder: string) =>
        (await fs.readdir(folder)).filter(
          (name) => name.endsWith(MIGRATION_EXTENSION) && !name.endsWith(`.d${MIGRATION_EXTENSION}`),
        )) as typeof fs.readdir,
    };
    return new FileMigrationProvider({ fs: only, path, migrationFolder: MIGRATIONS_FOLDER }).getMigrations();
  }
}

/**
 * Applies every pending migration; throws with the failing migration's name on error. Processes
 * starting together on a fresh database migrate it once: the others wait, then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return whileMigrationLocked(db, async (connection) => {
    const migrator = await migratorOn(connection);
    const { error, results = [] } = await migrator.migrateToLatest();
    const failed = results.find((r) => r.status === 'Error');
    if (error || failed) {
      const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
      throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`);
    }
    return results.map((r) => r.migrationName);
  });
}

/** The names of the migrations of this layout not yet applied (Kysely's own bookkeeping, in the current schema). */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const migrator = await migratorOn(db);
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Kysely's migrator over this layout's migrations. On Postgres:
 * - its tables are looked for in the current schema only: on a database with several schemas (one per
 *   environment or test) it would otherwise find another's;
 * - it sees only that schema's tables. Kysely checks for its tables by listing every column of every
 *   schema, looking each one's sequence up by name, so a column dropped in another schema meanwhile
 *   (another environment migrating) failed the migration with "column … does not exist".
 */
async function migratorOn(db: Kysely<any>): Promise<Migrator> {
  const schema = await currentPostgresSchema(db);
  return new Migrator({
    db: schema === undefined ? db : withIntrospectionOf(db, schema),
    provider: new LayoutMigrationProvider(),
    migrationTableSchema: schema,
  });
}

/** `db`, whose `introspection` lists the tables of `schema` alone, by name (all the migrator asks of it). */
function withIntrospectionOf(db: Kysely<any>, schema: string): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    getTables: async () => {
      const { rows } = await sql<{ name: string }>`
        select table_name as name from information_schema.tables where table_schema = ${schema}
      `.execute(db);
      return rows.map((r) => ({ name: r.name, schema, isView: false, columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value = Reflect.get(target, property, target);
      // Kysely's methods read private fields: they run on the instance itself, never on the proxy.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Kysely's migrator locks too late for a first start: it creates its own tables before taking its
 * lock, and on SQLite its lock is nothing and the migrations run outside a transaction. So the whole
 * run holds a lock of ours, on the one connection that migrates:
 * - SQLite: an IMMEDIATE transaction, the file's write lock (another process waits out its busy
 *   timeout at `begin immediate`); a failed migration rolls back whole.
 * - Postgres: a session advisory lock for the schema, in the two-key space (apart from the test
 *   helpers' one-key lock and Kysely's own).
 */
async function whileMigrationLocked<T>(db: Kysely<any>, migrate: (connection: Kysely<any>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    if (connection.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`select pg_advisory_lock(${MIGRATION_LOCK}, hashtext(current_schema()))`.execute(connection);
      try {
        return await migrate(connection);
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK}, hashtext(current_schema()))`.execute(connection);
      }
    }
    await sql`begin immediate`.execute(connection);
    try {
      const result = await migrate(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      // SQLite has already rolled back after some errors (a full disk): the first error is the one to tell.
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

const MIGRATION_LOCK = 20261123;

async function currentPostgresSchema(db: Kysely<any>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}
