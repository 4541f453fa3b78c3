import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PendingEvent } from '../../src/core/operations/events.js';
import { CLAIM_LEASE_MS, type Claim, type Claimant } from '../../src/db/claims.js';
import { dialects, useCore } from '../core/dialects.js';
import { newCard, newCustomer } from '../helpers/core.js';
import type { TestCore } from '../helpers/core.js';

// Claims with a lease (src/db/claims.ts), on the outbox: what several bot processes rely on.

/** A core whose outbox holds `count` undelivered events. */
async function outboxOf(ctx: Parameters<typeof useCore>[0], dialect: Parameters<typeof useCore>[1], count: number): Promise<TestCore> {
  const t = await useCore(ctx, dialect);
  const card = await newCard(t, await newCustomer(t, 10_000));
  for (let i = 0; i < count; i++) await t.admin.simulateOtp(card.id);
  return t;
}

const seqs = (claim: Claim<PendingEvent>) => claim.items.map((e) => e.seq);
const claimant = (t: TestCore, id: string): Claimant => ({ id, clock: t.clock });

for (const dialect of dialects()) {
  describe(`claims with a lease (${dialect})`, () => {
    test('claims split the rows, oldest first; a lapsed claim is taken over, a released one at once', async (ctx) => {
      const t = await outboxOf(ctx, dialect, 5);
      const all = (await t.core.events.pending()).map((e) => e.seq);
      const a = await t.core.events.claim(claimant(t, 'a'), 3);
      const b = await t.core.events.claim(claimant(t, 'b'), 3);
      assert.deepEqual(seqs(a), all.slice(0, 3));
      assert.deepEqual(seqs(b), all.slice(3));
      assert.deepEqual(seqs(await t.core.events.claim(claimant(t, 'c'))), []);
      await b.release();
      assert.deepEqual(seqs(await t.core.events.claim(claimant(t, 'c'))), all.slice(3));

      t.clock.advance(CLAIM_LEASE_MS);
      const d = await t.core.events.claim(claimant(t, 'd'));
      assert.deepEqual(seqs(d), all, 'every lease lapsed');
      assert.equal(await a.holds(a.items[0]!), false, 'the first holder learns that it lost its rows');
      assert.equal(await d.holds(d.items[0]!), true);
    });

    test('a holder working on is not taken over: its lease is renewed as it goes', async (ctx) => {
      const t = await outboxOf(ctx, dialect, 2);
      const a = await t.core.events.claim(claimant(t, 'a'));
      t.clock.advance(CLAIM_LEASE_MS / 2);
      assert.equal(await a.holds(a.items[0]!), true);
      await t.core.events.markDelivered(a.items[0]!.seq, t.clock.now());
      t.clock.advance(CLAIM_LEASE_MS / 2 + 1);
      assert.deepEqual(seqs(await t.core.events.claim(claimant(t, 'b'))), [], 'renewed past the first lease');
      assert.equal(await a.holds(a.items[1]!), true);
    });

    test('claims made at the same moment over several connections never share a row', async (ctx) => {
      const t = await outboxOf(ctx, dialect, 40);
      const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => t.core.events.claim(claimant(t, `c${i}`), 5)));
      const claimed = claims.flatMap(seqs);
      assert.equal(new Set(claimed).size, claimed.length, 'no row claimed twice');
      assert.equal(claimed.length, 40);
    });
  });
}
