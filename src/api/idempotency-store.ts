import type { Db } from '../db/schema.js';

interface IdempotencyKeysTable {
  user_id: string;
  idempotency_key: string;
  request_hash: string;
  /** Null while the first request with the key is still running. */
  status_code: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in-progress' };

/**
 * Stored replies for `Idempotency-Key`, one row per (user, key). A unique key decides which of two
 * simultaneous requests runs: the other finds the row and is told to retry. A claim left pending by
 * a process that stopped mid-request stays pending until it expires: the request may have taken
 * effect, and running it a second time would be worse than refusing.
 */
export function createIdempotencyStore(database: Db, ttlSeconds: number) {
  const db = database.withTables<{ idempotency_keys: IdempotencyKeysTable }>();

  async function tryInsert(userId: string, key: string, requestHash: string, now: Date): Promise<boolean> {
    const result = await db
      .insertInto('idempotency_keys')
      .values({
        user_id: userId,
        idempotency_key: key,
        request_hash: requestHash,
        status_code: null,
        response_body: null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      })
      .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  return {
    /** Claims the key for this request, or says what the earlier request with it left. */
    async claim(userId: string, key: string, requestHash: string, now: Date): Promise<Claim> {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (await tryInsert(userId, key, requestHash, now)) return { kind: 'claimed' };
        const row = await db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('user_id', '=', userId)
          .where('idempotency_key', '=', key)
          .executeTakeFirst();
        if (!row) continue;
        if (row.expires_at <= now.toISOString()) {
          await db
            .deleteFrom('idempotency_keys')
            .where('user_id', '=', userId)
            .where('idempotency_key', '=', key)
            .where('expires_at', '<=', now.toISOString())
            .execute();
          continue;
        }
        if (row.request_hash !== requestHash) return { kind: 'mismatch' };
        if (row.status_code === null || row.response_body === null) return { kind: 'in-progress' };
        return { kind: 'replay', statusCode: row.status_code, body: row.response_body };
      }
      return { kind: 'in-progress' };
    },

    /** Keeps the reply to replay it for the same key. */
    async complete(userId: string, key: string, statusCode: number, body: string): Promise<void> {
      await db
        .updateTable('idempotency_keys')
        .set({ status_code: statusCode, response_body: body })
        .where('user_id', '=', userId)
        .where('idempotency_key', '=', key)
        .execute();
    },

    /** Frees the key when the request ended in a way worth retrying (a cooldown, a fault). */
    async release(userId: string, key: string): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('user_id', '=', userId)
        .where('idempotency_key', '=', key)
        .where('status_code', 'is', null)
        .execute();
    },

    async purgeExpired(now: Date): Promise<number> {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now.toISOString()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
