import { loadConfig } from '../app/config.js';
import { loadDotEnv } from '../app/env.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

// `npm run migrate`: applies pending migrations to DATABASE_URL (start does the same on its own).
loadDotEnv();
const config = loadConfig();
const database = openDatabase(config.DATABASE_URL);
try {
  const applied = await migrateToLatest(database.db);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
} finally {
  await database.close();
}
