import type { StorageAdapter } from 'grammy';
import type { Clock } from '../core/clock.js';
import { deleteKv, readKv, writeKv, type BotDb } from './repository.js';

const MAX_CACHED = 10_000;

/**
 * A grammY storage adapter over `bot_kv`, for conversation state. Writes go to the
 * database at once (a restart loses nothing); reads are served from memory once seen, since one
 * bot process owns its chats (Telegram lets only one poller or webhook take a bot's updates).
 */
export function kvStorage<T>(db: BotDb, clock: Clock, prefix: string): StorageAdapter<T> {
  const cache = new Map<string, string | null>();
  const remember = (key: string, value: string | null) => {
    if (cache.size >= MAX_CACHED && !cache.has(key)) cache.delete(cache.keys().next().value as string);
    cache.set(key, value);
  };
  return {
    async read(key) {
      let value = cache.get(key);
      if (value === undefined) {
        value = (await readKv(db, prefix + key)) ?? null;
        remember(key, value);
      }
      return value === null ? undefined : (JSON.parse(value) as T);
    },
    async write(key, value) {
      const text = JSON.stringify(value);
      await writeKv(db, prefix + key, text, clock.now());
      remember(key, text);
    },
    async delete(key) {
      await deleteKv(db, prefix + key);
      remember(key, null);
    },
  };
}
