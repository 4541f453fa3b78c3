import type { StorageAdapter } from 'grammy';
import type { Clock } from '../core/clock.js';
import { deleteKv, readKv, writeKv, type BotDb } from './repository.js';

/**
 * A grammY storage adapter over `bot_kv`, for conversation state. Every read and write goes to the
 * database, nothing is kept in memory: another process may have moved the chat's conversation on since
 * (a second webhook instance handled its last update, or `tokens revoke` ended it from the command line).
 */
export function kvStorage<T>(db: BotDb, clock: Clock, prefix: string): StorageAdapter<T> {
  return {
    async read(key) {
      const value = await readKv(db, prefix + key);
      return value === undefined ? undefined : (JSON.parse(value) as T);
    },
    async write(key, value) {
      await writeKv(db, prefix + key, JSON.stringify(value), clock.now());
    },
    async delete(key) {
      await deleteKv(db, prefix + key);
    },
  };
}
