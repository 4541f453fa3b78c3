import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createTestCore, newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

const HOUR = 3_600_000;

for (const dialect of dialects()) {
  describe(`OTP codes do not live forever (${dialect})`, () => {
    test('codes older than their retention leave the OTP list, the outbox and the sandbox mailbox; newer ones stay', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { otpRetentionSeconds: 24 * 3600 } });
      const me = await newCustomer(t, 10_000);
      const card = await newCard(t, me);
      const old = await t.admin.simulateOtp(card.id, 500, 'Old shop');
      await t.admin.simulateOtpEmail(card.id);
      t.clock.advance(23 * HOUR);
      const fresh = await t.admin.simulateOtp(card.id, 500, 'New shop');
      t.clock.advance(2 * HOUR);

      const purged = await t.admin.purgeExpired();
      assert.deepEqual(purged, { otps: 1, outbox: 1, mailbox: 1 });
      const codes = (await t.core.listOtps(me.caller, card.id)).otps.map((o) => o.code);
      assert.deepEqual(codes, [fresh.code]);
      const payloads = (await t.database.db.selectFrom('outbox').select('payload').execute()).map((r) => r.payload).join('\n');
      assert.ok(!payloads.includes(old.code), 'the old code is gone from the outbox');
      assert.ok(payloads.includes(fresh.code));
      await assert.rejects(t.core.requestOtp(me.caller, card.id), /No OTP found for this card/);
    });

    test('delivered outbox rows are purged at once; undelivered ones only past the retention, so a stopped bot cannot grow it without bound', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const me = await newCustomer(t, 10_000);
      const card = await newCard(t, me);
      for (let i = 0; i < 5; i++) await t.admin.simulatePurchase(card.id, 100);
      const [first] = await t.core.events.pending(1);
      await t.core.events.markDelivered(first!.seq, t.clock.now());
      assert.equal((await t.admin.purgeExpired()).outbox, 1);
      assert.equal((await t.core.events.pending()).length, 4);
      t.clock.advance(25 * HOUR);
      assert.equal((await t.admin.purgeExpired()).outbox, 4);
      assert.equal((await t.database.db.selectFrom('outbox').select('seq').execute()).length, 0);
    });
  });
}

test('a purged OTP code is gone from the SQLite file itself, not left in a free page', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'retention-'));
  const file = path.join(dir, 'cards.db');
  const t = await createTestCore({ url: file });
  try {
    const me = await newCustomer(t, 10_000);
    const card = await newCard(t, me);
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await t.admin.simulateOtp(card.id, 100, 'Shop')).code);
    t.clock.advance(48 * HOUR);
    assert.equal((await t.admin.purgeExpired()).otps, 5);
    t.database.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = readFileSync(file).toString('latin1');
    assert.deepEqual(
      codes.filter((code) => bytes.includes(`"code":"${code}"`) || bytes.includes(`${code}USD`)),
      [],
    );
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
