import { compiledOnce } from '../../db/compiled-query.js';
import type { Executor } from '../../db/schema.js';
import type { BotDb } from './tables.js';

// Read on every update (conversation state, the chat's language): compiled once.
const kvValue = compiledOnce(1, (ex, key: string) => (ex as unknown as BotDb).selectFrom('bot_kv').select('value').where('key', '=', key));

export async function readKv(db: BotDb, key: string): Promise<string | undefined> {
  const { rows } = await kvValue.execute(db as unknown as Executor, key);
  return rows[0]?.value;
}

export async function writeKv(db: BotDb, key: string, value: string, at: Date): Promise<void> {
  await db
    .insertInto('bot_kv')
    .values({ key, value, updated_at: at.toISOString() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at.toISOString() }))
    .execute();
}

export async function deleteKv(db: BotDb, key: string): Promise<void> {
  await db.deleteFrom('bot_kv').where('key', '=', key).execute();
}
