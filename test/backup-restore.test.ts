import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ENTRY, runAdminCli, startProcess, type StartedProcess } from './helpers/processes.js';

// docs/backup-and-restore.md, done for real on SQLite as an operator does it: the service from a clone's
// folder (data/, keys/: the defaults), the admin command line in processes of its own, the data lost,
// then put back per the doc's steps and started again. A wrong or missing key is refused at the start.

/** Every service process a test started, killed at its end should an assertion leave one running. */
const running = new Set<StartedProcess>();
after(() => {
  for (const started of running) if (started.child.exitCode === null) started.child.kill('SIGKILL');
});

/** `npm run api` in `dir`, with the defaults of a clone (data/, keys/, no .env). */
function api(dir: string): StartedProcess {
  const started = startProcess(dir, { HTTP_PORT: '0' }, ENTRY.api);
  running.add(started);
  return started;
}

/** The HTTP API in `dir`, once it listens. */
async function serve(dir: string): Promise<{ process: StartedProcess; url: string }> {
  const started = api(dir);
  const listening = await started.waitForLog('HTTP API listening');
  return { process: started, url: listening.url as string };
}

async function stop(service: { process: StartedProcess }): Promise<void> {
  service.process.child.kill('SIGTERM');
  assert.equal(await service.process.exited, 0);
}

function client(url: string, token: string) {
  return async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as { data: any };
    assert.ok(response.ok, `${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };
}

/** What the restore must give back: the card, its details, the wallet and the card's ledger. */
async function holdings(url: string, token: string, card: string) {
  const call = client(url, token);
  return {
    card: await call('GET', `/api/v1/cards/${card}`),
    details: await call('GET', `/api/v1/cards/${card}/details`),
    wallet: await call('GET', '/api/v1/wallet/balance'),
    transactions: await call('GET', `/api/v1/cards/transactions?card_id=${card}`),
  };
}

test('a backup and its key, restored into lost data/ and keys/ folders, give back the user, the card and the ledger; a wrong key is refused', {
  timeout: 180_000,
}, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'restore-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const database = path.join(dir, 'data', 'cards.db');
  const keyFile = path.join(dir, 'keys', 'card-data.key');
  // Where the backups go: off the service's folders (here one folder for both; the doc says keep them apart).
  const backups = path.join(dir, 'backups');
  mkdirSync(backups, { mode: 0o700 });

  // A fresh start: the database and the key are made; a user, a card with a balance and a top-up.
  let service = await serve(dir);
  const created = await runAdminCli(dir, {}, 'users', 'create', '--name', 'Restored', '--deposit', '500');
  assert.equal(created.code, 0, created.output);
  const token = created.json.token as string;
  const call = client(service.url, token);
  const [bin] = (await call('GET', '/api/v1/bins')) as { id: string }[];
  const [plan] = (await call('GET', '/api/v1/card-plans')) as { id: number }[];
  const card = (await call('POST', '/api/v1/cards', { bin_id: bin!.id, name: 'Kept', planId: plan!.id }, { 'idempotency-key': 'create' }))
    .id as string;
  await call('POST', `/api/v1/cards/${card}/topup`, { amount: 50 }, { 'idempotency-key': 'topup' });
  const before = await holdings(service.url, token, card);
  assert.ok(before.card.balance >= 50 && before.transactions.data.length > 0, JSON.stringify(before));

  // The backup, online, while the service runs; the key copied apart from it.
  const backup = await runAdminCli(dir, {}, 'backup', '--to', path.join(backups, 'cards.db'));
  assert.equal(backup.code, 0, backup.output);
  const status = await runAdminCli(dir, {}, 'keys', 'status');
  assert.equal(backup.json.keyFingerprint, status.json.fingerprint, 'the backup names the key it needs');
  copyFileSync(keyFile, path.join(backups, `card-data.key.${backup.json.keyFingerprint}`));

  // Everything lost.
  await stop(service);
  rmSync(path.join(dir, 'data'), { recursive: true });
  rmSync(path.join(dir, 'keys'), { recursive: true });

  // The doc's steps: the folders made again (0700), the database copied back, the key put back (0600).
  mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
  copyFileSync(path.join(backups, 'cards.db'), database);

  // No key: refused, naming the fingerprint to restore, and no new key is made in its place.
  const keyless = api(dir);
  assert.equal(await keyless.exited, 2, keyless.output());
  assert.match(
    keyless.output(),
    new RegExp(`is missing.*fingerprint ${backup.json.keyFingerprint}.*restore the key file from your backup`),
  );
  assert.equal(existsSync(keyFile), false, 'no key generated for a database that had one');

  // Another key: refused, naming both fingerprints.
  mkdirSync(path.join(dir, 'keys'), { mode: 0o700 });
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  const wrong = api(dir);
  assert.equal(await wrong.exited, 2, wrong.output());
  assert.match(
    wrong.output(),
    new RegExp(`sealed under the key with fingerprint ${backup.json.keyFingerprint}.*restore the key file from your backup`),
  );

  // The backed-up key: the service starts, the token works, the card reads, the ledger is whole.
  copyFileSync(path.join(backups, `card-data.key.${backup.json.keyFingerprint}`), keyFile);
  service = await serve(dir);
  try {
    assert.deepEqual(await holdings(service.url, token, card), before);
    const ledger = await runAdminCli(dir, {}, 'ledger', 'check');
    assert.equal(ledger.code, 0, ledger.output);
    assert.equal(ledger.json.consistent, true);
  } finally {
    await stop(service);
  }
});
