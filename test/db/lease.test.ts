import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { keepRenewed, leasesOn } from '../../src/db/lease.js';
import { dialects, useCore } from '../core/dialects.js';
import { eventually } from '../helpers/wait.js';

// The lease primitive (src/db/lease.ts), on a table of its own: take if free or lapsed, renew and release
// only if mine; and on the older columns' shape (no holder column: the until time tells holdings apart).

const LEASE_MS = 30_000;
const at = (ms: number) => new Date(Date.parse('2026-03-01T12:00:00.000Z') + ms);

for (const dialect of dialects()) {
  describe(`leases (${dialect})`, () => {
    async function setup(t: Parameters<typeof useCore>[0]) {
      const { database } = await useCore(t, dialect);
      const db = database.db;
      await sql`create table lease_probe (id text primary key, note text, claimed_by text, claimed_until text, held_until text)`.execute(
        db,
      );
      const row = { id: 'r' };
      const leases = leasesOn({ table: 'lease_probe', key: ['id'], leaseMs: LEASE_MS });
      const holderOf = async () =>
        (await sql<{ claimed_by: string | null }>`select claimed_by from lease_probe`.execute(db)).rows[0]?.claimed_by;
      return { db, row, leases, holderOf };
    }

    test('taken if free, refused while held, taken once lapsed; a row is written when it has none', async (t) => {
      const { db, row, leases, holderOf } = await setup(t);
      assert.equal(await leases.take(db, row, 'a', at(0)), undefined, 'no row, none written unless asked');
      assert.deepEqual(await leases.take(db, row, 'a', at(0), { insert: { note: 'x' } }), {
        holder: 'a',
        until: at(LEASE_MS).toISOString(),
      });
      assert.equal(await leases.take(db, row, 'b', at(LEASE_MS - 1), { insert: { note: 'y' } }), undefined);
      assert.equal(await leases.take(db, row, 'b', at(LEASE_MS - 1)), undefined);
      assert.equal(await holderOf(), 'a');
      assert.ok(await leases.take(db, row, 'b', at(LEASE_MS), { insert: { note: 'y' } }), 'lapsed');
      assert.equal(await holderOf(), 'b');
      assert.equal(await leases.take(db, row, 'c', at(LEASE_MS + 1), { where: sql<boolean>`1 = 1` }), undefined);
    });

    test('renewed only by its holder, and only while it holds', async (t) => {
      const { db, row, leases, holderOf } = await setup(t);
      await leases.take(db, row, 'a', at(0), { insert: {} });
      assert.equal(await leases.renew(db, row, { holder: 'b' }, at(1_000)), undefined);
      assert.deepEqual(await leases.renew(db, row, { holder: 'a' }, at(LEASE_MS - 1)), {
        holder: 'a',
        until: at(2 * LEASE_MS - 1).toISOString(),
      });
      assert.equal(await leases.take(db, row, 'b', at(LEASE_MS)), undefined, 'renewed past the first lease');
      assert.ok(await leases.take(db, row, 'b', at(2 * LEASE_MS)));
      assert.equal(await leases.renew(db, row, { holder: 'a' }, at(2 * LEASE_MS)), undefined, 'taken over');
      assert.equal(await holderOf(), 'b');
    });

    test('released only by its holder: free at once for anyone', async (t) => {
      const { db, row, leases, holderOf } = await setup(t);
      await leases.take(db, row, 'a', at(0), { insert: {} });
      assert.equal(await leases.release(db, row, { holder: 'b' }), false);
      assert.equal(await holderOf(), 'a');
      assert.equal(await leases.release(db, row, { holder: 'a' }), true);
      assert.equal(await holderOf(), null);
      assert.ok(await leases.take(db, row, 'b', at(1)));
      assert.equal(await leases.release(db, row, { holder: 'b' }, { remove: true }), true);
      assert.equal(await holderOf(), undefined, 'the row removed');
    });

    test('without a holder column the until time tells holdings apart', async (t) => {
      const { db, row } = await setup(t);
      await sql`insert into lease_probe (id) values ('r')`.execute(db);
      const holds = leasesOn({ table: 'lease_probe', key: ['id'], columns: { until: 'held_until' }, leaseMs: LEASE_MS });
      const first = await holds.take(db, row, undefined, at(0));
      assert.ok(first);
      assert.equal(await holds.take(db, row, undefined, at(LEASE_MS - 1)), undefined);
      const second = await holds.take(db, row, undefined, at(LEASE_MS));
      assert.ok(second);
      assert.equal(await holds.release(db, row, first), false, 'the lapsed holding gives back nothing');
      assert.equal(await holds.release(db, row, second), true);
    });

    test('concurrent takes of one row: exactly one wins', async (t) => {
      const { db, row, leases } = await setup(t);
      const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.take(db, row, `p${i}`, at(0), { insert: {} })));
      assert.equal(taken.filter((held) => held !== undefined).length, 1);
    });
  });
}

test('keepRenewed renews until stopped, telling when the lease was lost', async () => {
  let renewals = 0;
  let lost = 0;
  const renewing = keepRenewed(
    async () => {
      renewals++;
      return renewals < 3;
    },
    1,
    { lost: () => lost++, failed: assert.fail },
  );
  await eventually('the lease was renewed until it was lost', () => lost > 0);
  renewing.stop();
  const seen = renewals;
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(renewals, seen, 'no renewal after stop');
});
