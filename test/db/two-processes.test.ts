import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startAtSignal } from '../helpers/processes.js';
import { createTestCore, newCard, newCustomer } from '../helpers/core.js';

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'writer-process.ts');
const ROUNDS = 150;

interface Moved {
  deposits: number;
  fees: number;
  purchases: number;
  refunds: number;
  refused: number;
  toppedUp: number;
}

test('two OS processes writing the same database file: no SQLITE_BUSY reaches a caller and money is conserved', async (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-two-processes-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cards.db');

  const setup = await createTestCore({ url: file });
  const alice = await newCustomer(setup, 10_000);
  const cardA = await newCard(setup, alice, 'A');
  const cardB = await newCard(setup, alice, 'B');
  await setup.close();

  const writers = [cardA, cardB].map((card) =>
    startAtSignal<Moved>('writer', WRITER, [file, alice.token, card.id, alice.userId, String(ROUNDS)]),
  );
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.go();
  const [a, b] = (await Promise.all(writers.map((w) => w.done))) as [Moved, Moved];

  const after = await createTestCore({ url: file });
  ctx.after(() => after.close());
  const ledger = await after.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.deepEqual(ledger.unbalancedJournals, []);
  assert.equal(ledger.total, 0);

  const caller = await after.core.authenticate(alice.token);
  const wallet = (await after.core.walletBalance(caller)).balance;
  const cards = (await after.core.listCards(caller)).reduce((sum, c) => sum + c.balance, 0);
  const creationFees = 2 * 500;
  const moved = (k: keyof Moved) => a[k] + b[k];
  assert.equal(moved('deposits'), 2 * ROUNDS * 1_000);
  assert.equal(wallet + cards, 10_000 + moved('deposits') - creationFees - moved('fees') - moved('purchases') + moved('refunds'));
  assert.equal(moved('refused'), 0, 'nothing was refused: no SQLITE_BUSY, no other refusal');
  assert.equal(moved('toppedUp'), 2 * ROUNDS);
  const statement = await after.core.listTransactions(caller, { limit: 1 });
  assert.ok(statement.pagination.total >= 2 * ROUNDS);
});

test('two OS processes topping up one card at once: the cooldown lets exactly one top-up through', async (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-two-processes-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cards.db');
  const setup = await createTestCore({ url: file });
  const alice = await newCustomer(setup, 100_000);
  const card = await newCard(setup, alice, 'Shared');
  await setup.close();

  const attempts = 40;
  const writers = [0, 1].map(() =>
    startAtSignal<Moved>('writer', WRITER, [file, alice.token, card.id, alice.userId, String(attempts), 'cooldown']),
  );
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.go();
  const [a, b] = (await Promise.all(writers.map((w) => w.done))) as [Moved, Moved];
  assert.equal(a.toppedUp + b.toppedUp, 1);
  assert.equal(a.refused + b.refused, 2 * attempts - 1);

  const after = await createTestCore({ url: file });
  ctx.after(() => after.close());
  assert.equal((await after.core.getCard(await after.core.authenticate(alice.token), card.id)).balance, 500);
  assert.deepEqual((await after.admin.checkLedger()).differences, []);
});
