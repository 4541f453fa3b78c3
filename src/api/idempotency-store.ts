import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { leasesOn } from '../db/lease.js';
import type { Database, Db } from '../db/schema.js';

/** The stored replies' table (migrations/20261122_03 and 20261123_03). */
export interface IdempotencyKeysTable {
  user_id: string;
  idempotency_key: string;
  request_hash: string;
  /** Null while the claim is pending: its request has not committed. */
  status_code: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
  /** The pending claim's holder; the completion must present it. */
  claim_token: string | null;
  /** After this a pending claim may be taken over; null (rows older than leases): never, until it expires. */
  lease_until: string | null;
}

type Tables = { idempotency_keys: IdempotencyKeysTable };

export type Claim =
  | { kind: 'claimed'; token: string }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in-progress' };

/** A completion whose claim a retry took over after the lease: the operation must roll back. */
export class ClaimTakenOverError extends Error {
  override readonly name = 'ClaimTakenOverError';
  constructor() {
    super('The Idempotency-Key claim was taken over by a retry');
  }
}

export interface IdempotencyStoreOptions {
  /** How long a stored reply is replayed (unless a claim asks for less). */
  ttlSeconds: number;
  /** How long a pending claim is held before a retry may take it over. */
  leaseMs: number;
  /** Keys kept per user; past that the oldest stored replies go. */
  maxKeysPerUser: number;
}

/**
 * Stored replies for `Idempotency-Key`, one row per (user, key). A unique key decides which of two
 * simultaneous requests runs; the other finds the row and is told to retry. The reply is written by
 * `complete` inside the operation's own transaction, so a pending row always means an operation that
 * has not committed (still running, or lost with its process): once its lease has passed, a retry
 * takes the claim over and runs the request. The completion is conditional on the claim's token, so
 * a slow original and the retry that took over can never both commit.
 *
 * The claim is a lease (`src/db/lease.ts`) kept in the columns it shipped with, `claim_token` and
 * `lease_until`.
 */
export function createIdempotencyStore(database: Db, options: IdempotencyStoreOptions) {
  const db = database.withTables<Tables>();
  const claims = leasesOn({
    table: 'idempotency_keys',
    key: ['user_id', 'idempotency_key'],
    columns: { holder: 'claim_token', until: 'lease_until' },
    leaseMs: options.leaseMs,
  });
  const pending = sql<boolean>`status_code is null`;
  const later = (now: Date, ms: number) => new Date(now.getTime() + ms).toISOString();

  async function tryInsert(
    userId: string,
    key: string,
    requestHash: string,
    token: string,
    now: Date,
    ttlSeconds: number,
  ): Promise<boolean> {
    const result = await db
      .insertInto('idempotency_keys')
      .values({
        user_id: userId,
        idempotency_key: key,
        request_hash: requestHash,
        status_code: null,
        response_body: null,
        created_at: now.toISOString(),
        expires_at: later(now, ttlSeconds * 1000),
        claim_token: token,
        lease_until: later(now, options.leaseMs),
      })
      .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /**
   * Takes over a pending claim whose lease has passed, if it is still the one that was read. (A pending row
   * without a lease, older than leases, is never taken over: `claim` does not call this for one, and the
   * row read keeps its token only as long as its lease.)
   */
  async function takeOver(userId: string, key: string, staleToken: string, token: string, now: Date, ttlSeconds: number): Promise<boolean> {
    const taken = await claims.take(db, { user_id: userId, idempotency_key: key }, token, now, {
      set: { created_at: now.toISOString(), expires_at: later(now, ttlSeconds * 1000) },
      where: sql<boolean>`${pending} and claim_token = ${staleToken}`,
    });
    return taken !== undefined;
  }

  return {
    /** Claims the key for this request, or says what the earlier request with it left. */
    async claim(userId: string, key: string, requestHash: string, now: Date, ttlSeconds = options.ttlSeconds): Promise<Claim> {
      const at = now.toISOString();
      for (let attempt = 0; attempt < 3; attempt++) {
        const token = randomUUID();
        if (await tryInsert(userId, key, requestHash, token, now, ttlSeconds)) return { kind: 'claimed', token };
        const row = await db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('user_id', '=', userId)
          .where('idempotency_key', '=', key)
          .executeTakeFirst();
        if (!row) continue;
        if (row.expires_at <= at) {
          await db
            .deleteFrom('idempotency_keys')
            .where('user_id', '=', userId)
            .where('idempotency_key', '=', key)
            .where('expires_at', '<=', at)
            .execute();
          continue;
        }
        if (row.request_hash !== requestHash) return { kind: 'mismatch' };
        if (row.status_code !== null && row.response_body !== null) {
          return { kind: 'replay', statusCode: row.status_code, body: row.response_body };
        }
        if (row.claim_token === null || row.lease_until === null || row.lease_until > at) return { kind: 'in-progress' };
        if (await takeOver(userId, key, row.claim_token, token, now, ttlSeconds)) return { kind: 'claimed', token };
      }
      return { kind: 'in-progress' };
    },

    /**
     * Keeps the reply to replay it, inside the operation's transaction `trx`. Throws
     * `ClaimTakenOverError` when the claim is no longer this request's, which rolls the operation back.
     */
    async complete(trx: Kysely<Database>, userId: string, key: string, token: string, statusCode: number, body: string): Promise<void> {
      const row = { user_id: userId, idempotency_key: key };
      const stored = await claims.release(
        trx,
        row,
        { holder: token },
        { set: { status_code: statusCode, response_body: body }, where: pending },
      );
      if (!stored) throw new ClaimTakenOverError();
    },

    /** Frees the key when its request stored nothing (a refusal, a fault), so the key can be retried. */
    async release(userId: string, key: string, token: string): Promise<void> {
      await claims.release(db, { user_id: userId, idempotency_key: key }, { holder: token }, { remove: true, where: pending });
    },

    /** Keeps at most `maxKeysPerUser` keys for the user: the oldest stored replies beyond that go. */
    async evictOldest(userId: string): Promise<void> {
      const cutoff = await db
        .selectFrom('idempotency_keys')
        .select(['created_at', 'idempotency_key'])
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('idempotency_key', 'desc')
        .limit(1)
        .offset(options.maxKeysPerUser)
        .executeTakeFirst();
      if (!cutoff) return;
      await db
        .deleteFrom('idempotency_keys')
        .where('user_id', '=', userId)
        .where('status_code', 'is not', null)
        .where((eb) =>
          eb.or([
            eb('created_at', '<', cutoff.created_at),
            eb.and([eb('created_at', '=', cutoff.created_at), eb('idempotency_key', '<=', cutoff.idempotency_key)]),
          ]),
        )
        .execute();
    },
  };
}

/** Deletes the stored replies past their time; returns how many went (the process's owner runs it hourly, src/app/housekeeping.ts). */
export async function purgeExpiredIdempotencyKeys(database: Db, now: Date): Promise<number> {
  const result = await database
    .withTables<Tables>()
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
