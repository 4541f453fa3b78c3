import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClaimTakenOverError, createIdempotencyStore } from '../../src/api/idempotency-store.js';
import { dialects, useCore } from '../core/dialects.js';
import { newCustomer } from '../helpers/core.js';

// A pending claim means an operation that has not committed: it may be taken over after its lease,
// and only the claim's holder can complete it, inside the operation's transaction.

const LEASE_MS = 60_000;
const at = (ms: number) => new Date(Date.parse('2026-03-01T12:00:00.000Z') + ms);

for (const dialect of dialects()) {
  describe(`the idempotency store (${dialect})`, () => {
    async function setup(t: Parameters<typeof useCore>[0], maxKeysPerUser = 1000) {
      const core = await useCore(t, dialect);
      const { userId } = await newCustomer(core, 0);
      const store = createIdempotencyStore(core.database.db, { ttlSeconds: 86_400, leaseMs: LEASE_MS, maxKeysPerUser });
      const count = async (key?: string) => {
        let query = core.database.db
          .withTables<{ idempotency_keys: { user_id: string; idempotency_key: string } }>()
          .selectFrom('idempotency_keys')
          .select('idempotency_key')
          .where('user_id', '=', userId);
        if (key !== undefined) query = query.where('idempotency_key', '=', key);
        return (await query.execute()).length;
      };
      return { core, store, userId, count };
    }

    test('a pending claim is refused until its lease has passed, then taken over by the same request only', async (t) => {
      const { store, userId } = await setup(t);
      const first = await store.claim(userId, 'k', 'hash', at(0));
      assert.equal(first.kind, 'claimed');
      assert.deepEqual(await store.claim(userId, 'k', 'hash', at(LEASE_MS - 1)), { kind: 'in-progress' });
      assert.deepEqual(await store.claim(userId, 'k', 'other', at(LEASE_MS)), { kind: 'mismatch' });
      const second = await store.claim(userId, 'k', 'hash', at(LEASE_MS));
      assert.equal(second.kind, 'claimed');
      assert.notEqual(second.kind === 'claimed' && second.token, first.kind === 'claimed' && first.token);
      assert.deepEqual(await store.claim(userId, 'k', 'hash', at(LEASE_MS + 1)), { kind: 'in-progress' });
    });

    test('only the holder completes: the taken-over original throws inside its transaction, which rolls back', async (t) => {
      const { core, store, userId, count } = await setup(t);
      const first = await store.claim(userId, 'k', 'hash', at(0));
      const second = await store.claim(userId, 'k', 'hash', at(LEASE_MS));
      assert.ok(first.kind === 'claimed' && second.kind === 'claimed');

      const nameOf = async () =>
        (await core.database.db.selectFrom('users').select('name').where('id', '=', userId).executeTakeFirstOrThrow()).name;
      const operation = (token: string, body: string) =>
        core.database.db.transaction().execute(async (trx) => {
          // The operation's own write, which must stand or fall with the stored reply.
          await trx.updateTable('users').set({ name: body }).where('id', '=', userId).execute();
          await store.complete(trx, userId, 'k', token, 200, body);
        });
      await assert.rejects(operation(first.token, 'stale'), ClaimTakenOverError);
      assert.equal(await nameOf(), 'Alice');
      await operation(second.token, 'fresh');
      assert.equal(await nameOf(), 'fresh');
      assert.deepEqual(await store.claim(userId, 'k', 'hash', at(LEASE_MS + 1)), { kind: 'replay', statusCode: 200, body: 'fresh' });
      // Completed, the claim cannot be completed again, nor released.
      await assert.rejects(operation(second.token, 'again'), ClaimTakenOverError);
      await store.release(userId, 'k', second.token);
      assert.equal(await count('k'), 1);
    });

    test('release frees a pending claim for its holder only', async (t) => {
      const { store, userId, count } = await setup(t);
      const first = await store.claim(userId, 'k', 'hash', at(0));
      const second = await store.claim(userId, 'k', 'hash', at(LEASE_MS));
      assert.ok(first.kind === 'claimed' && second.kind === 'claimed');
      await store.release(userId, 'k', first.token);
      assert.equal(await count('k'), 1);
      await store.release(userId, 'k', second.token);
      assert.equal(await count('k'), 0);
    });

    test('at most maxKeysPerUser keys per user: the oldest stored replies are evicted', async (t) => {
      const { core, store, userId, count } = await setup(t, 2);
      const complete = async (key: string, ms: number) => {
        const claim = await store.claim(userId, key, 'hash', at(ms));
        assert.ok(claim.kind === 'claimed');
        await core.database.db.transaction().execute((trx) => store.complete(trx, userId, key, claim.token, 200, key));
        await store.evictOldest(userId);
      };
      await complete('a', 0);
      await complete('b', 1);
      assert.equal(await count(), 2);
      await complete('c', 2);
      assert.equal(await count(), 2);
      assert.equal(await count('a'), 0);
      assert.equal((await store.claim(userId, 'c', 'hash', at(3))).kind, 'replay');
    });
  });
}
