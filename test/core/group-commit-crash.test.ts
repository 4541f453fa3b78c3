import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { catalogue, createTestCore, newCustomer } from '../helpers/core.js';

const LOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'batch-load-process.ts');
const CARDS = 16;
const ACKS_BEFORE_KILL = 400;

test('a kill -9 during batched load loses no acknowledged top-up: after a restart the file is intact, every acknowledged transaction is there and the ledger is exact', async (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-batch-crash-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cards.db');

  const setup = await createTestCore({ url: file, settings: { topupCooldownSeconds: 0 } });
  // The plan with the highest limit, and the smallest top-ups ($5): a card's limit (5,000 top-ups) is far off
  // however long this process takes to kill the load process (on the cheapest plan it was 100).
  const { bin, plans } = await catalogue(setup);
  const roomiest = plans.reduce((a, b) => (b.limit > a.limit ? b : a));
  const cards: { token: string; cardId: string }[] = [];
  for (let i = 0; i < CARDS; i++) {
    const person = await newCustomer(setup, 100_000_000, `P${i}`);
    const card = await setup.core.createCard(person.caller, { bin_id: bin.id, planId: roomiest.id, name: `Load ${i}` });
    cards.push({ token: person.token, cardId: card.id });
  }
  const at = setup.clock.now().toISOString();
  await setup.close();

  const child = spawn(process.execPath, ['--import', 'tsx', LOAD, file, at, JSON.stringify(cards)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acknowledged: string[] = [];
  let stderr = '';
  let partial = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('ack ')) acknowledged.push(line.slice(4));
      if (acknowledged.length >= ACKS_BEFORE_KILL) resolve();
    });
    void exited.then(() => reject(new Error(`the load process exited early: ${stderr}`)));
  });
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');

  const after = await createTestCore({ url: file });
  ctx.after(() => after.close());
  const sqlite = after.database.sqlite!;
  assert.deepEqual(sqlite.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  const present = new Set(
    (sqlite.prepare("select id from card_transactions where type = 'topup'").all() as { id: string }[]).map((r) => r.id),
  );
  const lost = acknowledged.filter((id) => !present.has(id));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged top-ups are missing`);
  assert.ok(present.size >= acknowledged.length);
  const ledger = await after.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.equal(ledger.total, 0);
  // Each card holds exactly what its recorded top-ups put on it.
  const mismatched = sqlite
    .prepare(
      `select cards.id from cards join accounts on accounts.id = cards.account_id
       where accounts.balance != (select coalesce(sum(amount), 0) from card_transactions t where t.card_id = cards.id and t.type = 'topup')`,
    )
    .all();
  assert.deepEqual(mismatched, []);
});
