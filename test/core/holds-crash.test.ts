import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPendingOperations, PENDING_GRACE_MS } from '../../src/core/operations/pending-operations.js';
import { catalogue, createTestCore, newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { assertCounted, assertShown, statementOf } from '../helpers/holds.js';
import { dialects, freshPostgresSchema, whileNoSchemaIsDropped } from './dialects.js';

const PROCESS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'holds-crash-process.ts');
const CALLS = ['withdraw', 'terminate', 'issue'];

/** A database of the dialect that outlives one core: a file, or a Postgres schema of its own. */
async function database(dialect: 'sqlite' | 'postgres'): Promise<{
  url: string;
  open(): Promise<TestCore>;
  /** Runs `work` while no other test's schema is dropped (a process starting on Postgres migrates, which reads every schema). */
  migrating<T>(work: () => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'cards-holds-crash-'));
    const url = path.join(dir, 'cards.db');
    return {
      url,
      open: () => createTestCore({ url }),
      migrating: (work) => work(),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const schema = await freshPostgresSchema(baseUrl);
  return {
    url: schema.url,
    open: () => whileNoSchemaIsDropped(baseUrl, () => createTestCore({ url: schema.url })),
    migrating: (work) => whileNoSchemaIsDropped(baseUrl, work),
    drop: schema.drop,
  };
}

for (const dialect of dialects()) {
  describe(`a kill -9 while operations wait on the provider (${dialect})`, () => {
    test('a withdrawal, a closure and a creation held at the provider: read at once after the kill, card, statement and wallet agree; after the recovery too', async (ctx) => {
      const db = await database(dialect);
      ctx.after(() => db.drop());

      const setup = await db.open();
      const alice = await newCustomer(setup, 100_000, 'Alice');
      const withdrawCard = await newCard(setup, alice, 'Withdrawn');
      const closeCard = await newCard(setup, alice, 'Closed');
      await setup.core.topup(alice.caller, withdrawCard.id, { amount: 5_000 });
      const explained = (await setup.core.topup(alice.caller, closeCard.id, { amount: 3_000 })).walletBalance;
      const bob = await newCustomer(setup, 100_000_000, 'Bob');
      const { bin, plan, plans } = await catalogue(setup);
      const roomiest = plans.reduce((a, b) => (b.limit > a.limit ? b : a));
      const loadCard = await setup.core.createCard(bob.caller, { bin_id: bin.id, planId: roomiest.id, name: 'Load' });
      const at = setup.clock.now().toISOString();
      await setup.close();

      const run = {
        token: alice.token,
        withdrawCardId: withdrawCard.id,
        closeCardId: closeCard.id,
        binId: bin.id,
        planId: plan.id,
        load: { token: bob.token, cardId: loadCard.id },
      };
      let stderr = '';
      let stdout = '';
      // The child migrates as it starts: no other test's schema may be dropped from its start until it holds every call.
      const { child, exited } = await db.migrating(async () => {
        const child = spawn(process.execPath, ['--import', 'tsx', PROCESS, db.url, at, JSON.stringify(run)], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const exited = new Promise<string | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            stdout += chunk.toString();
            if (CALLS.every((call) => stdout.includes(`reached ${call}\n`))) resolve();
          });
          void exited.then(() => reject(new Error(`the process exited before every call was held: ${stderr}`)));
        });
        return { child, exited };
      });
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      // The same moment as the killed process: the recovery at start leaves the operations pending.
      const after = await db.open();
      ctx.after(() => after.close());
      const held = await assertShown(after, alice, explained);
      assert.deepEqual(
        held.map((c) => [c.name, c.status, c.balance, c.heldFee]),
        [
          ['Withdrawn', 'active', 3_500, undefined],
          ['Closed', 'active', 0, undefined],
          ['Mid-issue', 'processing', 0, plan.creationFee],
        ],
      );
      const pendingLine = async (cardId: string) => {
        const [line] = (await statementOf(after, alice, cardId)).lines;
        return [line?.status, line?.type, line?.amount];
      };
      assert.deepEqual(await pendingLine(withdrawCard.id), ['Pending', 'withdrawal', 1_500]);
      assert.deepEqual(await pendingLine(closeCard.id), ['Pending', 'card_close', 3_000]);
      await assertCounted(after);

      after.clock.advance(PENDING_GRACE_MS);
      const recovered = await createPendingOperations(after.database.db, after.clock).recover();
      assert.deepEqual(recovered.map((r) => r.kind).sort(), ['close', 'create_card', 'withdraw']);
      const released = await assertShown(after, alice, explained);
      assert.deepEqual(
        released.map((c) => [c.name, c.status, c.balance]),
        [
          ['Withdrawn', 'active', 5_000],
          ['Closed', 'active', 3_000],
        ],
      );
      assert.deepEqual(await pendingLine(withdrawCard.id), ['Approved', 'topup', 5_000]);
      assert.deepEqual(await pendingLine(closeCard.id), ['Approved', 'topup', 3_000]);
      await assertCounted(after);
      const ledger = await after.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.equal(ledger.total, 0);
    });
  });
}
