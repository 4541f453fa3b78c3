import type { StorageAdapter } from 'grammy';
import type { Clock } from '../core/clock.js';
import { deleteKv, readKv, writeKv, type BotDb } from './repository.js';

/** A grammY storage adapter over `bot_kv`, for sessions and conversation state. */
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
