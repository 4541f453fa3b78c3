import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestCore, newCard, newCustomer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi } from '../helpers/http.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crash-server.ts');
/** The lease of a pending claim with the default request timeout (30 s) and margin (30 s). */
const LEASE_MS = 60_000;

/** Starts the API in a child process on `file`; resolves with its port and a way to wait for a line. */
function startServerProcess(file: string, at: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, file, at], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { line: RegExp; resolve(match: RegExpMatchArray): void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of [...waiters]) {
      const match = out.match(w.line);
      if (match) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(match);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('close', (code, signal) => resolve(signal ?? code)));
  const waitFor = (line: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const match = out.match(line);
      if (match) return resolve(match);
      waiters.push({ line, resolve });
      void exited.then(() => reject(new Error(`server process exited before ${line}: ${err}`)));
    });
  return { child, waitFor, exited };
}

test('a withdrawal whose process was killed mid-request runs once when retried with its key after the lease; the ledger is exact', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cards.db');

  const setup = await createTestCore({ url: file });
  const alice = await newCustomer(setup, 100_000);
  const card = await newCard(setup, alice);
  await setup.core.topup(alice.caller, card.id, { amount: 50_000 });
  const at = setup.clock.now().toISOString();
  await setup.close();

  // The first attempt: claimed, then killed inside its transaction (at the provider).
  const server = startServerProcess(file, at);
  const port = (await server.waitFor(/port (\d+)/))[1];
  const request = {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', 'idempotency-key': 'crash-1' },
    body: '{"amount":100}',
  };
  const lost = fetch(`http://127.0.0.1:${port}/api/v1/cards/${card.id}/withdraw`, request).catch(() => 'connection lost');
  await server.waitFor(/in-provider/);
  server.child.kill('SIGKILL');
  assert.equal(await server.exited, 'SIGKILL');
  assert.equal(await lost, 'connection lost');

  // The same file, served again; the clock where the killed process left it.
  const runtime = await createTestCore({ url: file });
  runtime.clock.set(at);
  const api = await startTestApi({ core: runtime });
  t.after(() => api.close());
  const retry = () =>
    api.call('POST', `/api/v1/cards/${card.id}/withdraw`, {
      token: alice.token,
      body: { amount: 100 },
      headers: { 'idempotency-key': 'crash-1' },
    });

  assertFailure(await retry(), 409, 'A request with this Idempotency-Key is still being processed; retry shortly');
  runtime.clock.advance(LEASE_MS + 1000);
  const done = await retry();
  const data = assertSuccess(done);
  assert.equal(done.headers.get('idempotent-replayed'), null);
  assert.equal(data.amount_withdrawn, 100);
  const replay = await retry();
  assert.equal(replay.text, done.text);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');

  const ledger = await runtime.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.deepEqual(ledger.unbalancedJournals, []);
  const withdrawals = (await runtime.core.listTransactions(alice.caller, { card_id: card.id })).data.filter((x) => x.type === 'withdrawal');
  assert.equal(withdrawals.length, 1);
  assert.equal((await runtime.core.getCard(alice.caller, card.id)).balance, 50_000 - 10_000);
});
