import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startCore, type CoreRuntime } from '../src/app/compose.js';
import { CardDataKeyError, cardDataKeyFingerprint } from '../src/core/keys/secrets.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { freshPostgresSchema, whileNoSchemaIsDropped, withoutPostgres } from './core/dialects.js';
import { newCard, newCustomer } from './helpers/core.js';
import { nodeArgs } from './helpers/processes.js';

// The card-data key at start: generated only for a database that never had one; a missing, wrong or
// exposed key stops every entry point with exit code 2 instead of sealing new data under a new key.

const TSX = import.meta.resolve('tsx');
const script = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const ADMIN_CLI = script('../src/admin/cli.ts');
const API_MAIN = script('../src/api-main.ts');
const START_PROCESS = script('./compose-start-process.ts');

interface Place {
  dir: string;
  database: string;
  keyFile: string;
  env: Record<string, string>;
}

function place(ctx: TestContext): Place {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const database = path.join(dir, 'data', 'cards.db');
  const keyFile = path.join(dir, 'data', 'card-data.key');
  return { dir, database, keyFile, env: { DATABASE_URL: database, CARD_DATA_KEY_FILE: keyFile } };
}

const startFrom = (p: Place) => startCore({ databaseUrl: p.database, cardDataKey: { file: p.keyFile } });

/** A database holding one card, sealed under the key generated into `p.keyFile`; returns that key's fingerprint. */
async function withACard(p: Place): Promise<string> {
  const t = await startFrom(p);
  try {
    await newCard(t, await newCustomer(t));
    return t.cardDataKey.fingerprint;
  } finally {
    await t.close();
  }
}

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an entry point as an operator would, in its own process (from `p.dir`, so no `.env` is read). */
function run(p: Place, file: string, args: string[] = [], env: Record<string, string> = {}): Promise<Exited> {
  const child = spawn(process.execPath, [...nodeArgs(file), ...args], {
    cwd: p.dir,
    env: { PATH: process.env.PATH ?? '', ...p.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function refusal(start: Promise<CoreRuntime>): Promise<string> {
  const error = await start.then(
    async (t) => {
      await t.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  assert.ok(error instanceof CardDataKeyError, `expected a CardDataKeyError, got ${String(error)}`);
  return error.message;
}

async function rows(url: string) {
  const database = openDatabase(url);
  try {
    const db = database.db;
    return {
      keys: await db.selectFrom('card_data_keys').selectAll().execute(),
      bins: (await db.selectFrom('bins').select('bin').execute()).map((b) => b.bin).sort(),
      plans: (await db.selectFrom('plans').select('name').execute()).length,
    };
  } finally {
    await database.close();
  }
}

describe('the card-data key at start', () => {
  test('a fresh database gets a new key, mode 0600 in a folder of mode 0700, and its fingerprint recorded', async (ctx) => {
    const p = place(ctx);
    const t = await startFrom(p);
    await t.close();
    assert.equal(statSync(p.keyFile).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(p.keyFile)).mode & 0o777, 0o700);
    const key = Buffer.from(readFileSync(p.keyFile, 'utf8').trim(), 'base64');
    const { keys } = await rows(p.database);
    assert.deepEqual(
      keys.map((k) => [k.fingerprint, k.state]),
      [[cardDataKeyFingerprint(key), 'current']],
    );
    assert.equal(t.cardDataKey.fingerprint, cardDataKeyFingerprint(key));
    assert.ok(!JSON.stringify(keys).includes(key.toString('base64')), 'the key itself is not stored');
  });

  test('the next start reads the same key and its cards', async (ctx) => {
    const p = place(ctx);
    const t = await startFrom(p);
    const alice = await newCustomer(t);
    const card = await newCard(t, alice);
    const before = await t.core.getSensitiveDetails(alice.caller, card.id);
    await t.close();
    const again = await startFrom(p);
    ctx.after(() => again.close());
    assert.deepEqual(await again.core.getSensitiveDetails(alice.caller, card.id), before);
  });

  test('a missing key file on a database holding cards stops the admin command line with exit code 2, saying what to restore', async (ctx) => {
    const p = place(ctx);
    const fingerprint = await withACard(p);
    unlinkSync(p.keyFile);
    const human = await run(p, ADMIN_CLI, ['users', 'list']);
    assert.equal(human.code, 2, human.stderr);
    for (const said of [p.keyFile, fingerprint, 'restore the key file from your backup; do not generate a new one'])
      assert.ok(human.stderr.includes(said), said);
    const json = await run(p, ADMIN_CLI, ['users', 'list', '--json']);
    assert.equal(json.code, 2);
    const answer = JSON.parse(json.stdout) as { ok: boolean; error: string };
    assert.equal(answer.ok, false);
    assert.match(answer.error, /do not generate a new one/);
    assert.throws(() => statSync(p.keyFile), /ENOENT/, 'no new key was generated');
  });

  test('a missing key file on a database holding cards stops the service (npm run api) with exit code 2', async (ctx) => {
    const p = place(ctx);
    const fingerprint = await withACard(p);
    unlinkSync(p.keyFile);
    const api = await run(p, API_MAIN, [], { HTTP_PORT: '0', LOG_LEVEL: 'info' });
    assert.equal(api.code, 2, api.stdout + api.stderr);
    // The fatal line is a log: on standard error.
    assert.ok(api.stderr.includes(fingerprint) && api.stderr.includes(p.keyFile), api.stderr);
    assert.throws(() => statSync(p.keyFile), /ENOENT/);
  });

  test('a missing key file on a database that recorded a key but holds no card yet is refused too', async (ctx) => {
    const p = place(ctx);
    const first = await startFrom(p);
    const fingerprint = first.cardDataKey.fingerprint;
    await first.close();
    unlinkSync(p.keyFile);
    const message = await refusal(startFrom(p));
    assert.match(message, new RegExp(`missing.*${fingerprint}`));
  });

  test('a key whose fingerprint is not the recorded one is refused, naming both', async (ctx) => {
    const p = place(ctx);
    const expected = await withACard(p);
    const other = Buffer.alloc(32, 9);
    writeFileSync(p.keyFile, `${other.toString('base64')}\n`, { mode: 0o600 });
    const message = await refusal(startFrom(p));
    assert.ok(message.includes(expected) && message.includes(cardDataKeyFingerprint(other)), message);
    assert.match(message, /restore the key file from your backup; do not generate a new one/);
    const cli = await run(p, ADMIN_CLI, ['users', 'list']);
    assert.equal(cli.code, 2, cli.stderr);
  });

  test('a key file that group or others may read is refused: chmod 600', async (ctx) => {
    const p = place(ctx);
    await startFrom(p).then((t) => t.close());
    chmodSync(p.keyFile, 0o640);
    const message = await refusal(startFrom(p));
    assert.ok(message.includes(`chmod 600 ${p.keyFile}`), message);
  });

  test('a database from before fingerprints were kept adopts the key that reads its cards, and refuses one that does not', async (ctx) => {
    const p = place(ctx);
    const fingerprint = await withACard(p);
    const legacy = openDatabase(p.database);
    await legacy.db.deleteFrom('card_data_keys').execute();
    await legacy.close();
    const key = readFileSync(p.keyFile);
    writeFileSync(p.keyFile, Buffer.alloc(32, 9).toString('base64'), { mode: 0o600 });
    assert.match(await refusal(startFrom(p)), /does not read the card data/);
    writeFileSync(p.keyFile, key);
    await startFrom(p).then((t) => t.close());
    assert.deepEqual(
      (await rows(p.database)).keys.map((k) => k.fingerprint),
      [fingerprint],
    );
  });
});

describe('the card-data key with CARD_DATA_KEY_FILE unset', () => {
  test('a new install generates it in keys/, apart from the database in data/, with no warning about its place', async (ctx) => {
    const p = { ...place(ctx), env: {} };
    const created = await run(p, ADMIN_CLI, ['users', 'create', '--name', 'Fresh']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(statSync(path.join(p.dir, 'keys', 'card-data.key')).mode & 0o777, 0o600);
    assert.equal(statSync(path.join(p.dir, 'keys')).mode & 0o777, 0o700);
    assert.ok(statSync(path.join(p.dir, 'data', 'cards.db')).isFile());
    assert.deepEqual(
      readdirSync(path.join(p.dir, 'data')).filter((f) => f.includes('.key')),
      [],
    );
    assert.doesNotMatch(created.stderr, /sits beside|older default/);
  });

  test('an older install with its key in data/ beside the database still starts on it, and is warned', async (ctx) => {
    const p = place(ctx);
    // The older default: the key generated beside the database.
    const older = await run({ ...p, env: {} }, ADMIN_CLI, ['users', 'create', '--name', 'Older'], {
      CARD_DATA_KEY_FILE: 'data/card-data.key',
    });
    assert.equal(older.code, 0, older.stderr);
    const now = await run({ ...p, env: {} }, ADMIN_CLI, ['users', 'list']);
    assert.equal(now.code, 0, now.stderr);
    assert.match(now.stdout, /Older/);
    assert.match(now.stderr, /sits beside the database/);
    assert.throws(() => statSync(path.join(p.dir, 'keys')), /ENOENT/, 'no new key was made in keys/');
  });
});

/** Starts `count` processes that each wait, then start the core together on the same settings. */
async function startTogether(p: Place, count: number, env: Record<string, string> = {}): Promise<Exited[]> {
  const children = Array.from({ length: count }, () => {
    const child = spawn(process.execPath, ['--import', TSX, START_PROCESS], {
      cwd: p.dir,
      env: { PATH: process.env.PATH ?? '', ...p.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith('ready\n')) resolve();
      }),
    );
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<Exited>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, ready: Promise.race([ready, exited]), exited };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.child.stdin.end('go\n');
  return Promise.all(children.map((c) => c.exited));
}

describe('a first start of several processes together', () => {
  const DEFAULT_BINS = ['414720', '424242', '531993', '545454'];

  test('processes starting at once on a new SQLite file all come up: one migration, one key, one fingerprint, one seed', async (ctx) => {
    for (let round = 0; round < 3; round++) {
      const p = place(ctx);
      const exits = await startTogether(p, 4);
      for (const exit of exits) assert.equal(exit.code, 0, `round ${round}: ${exit.stderr}`);
      for (const exit of exits) assert.equal(JSON.parse(exit.stdout.split('\n')[1]!).bins, DEFAULT_BINS.length);
      const { keys, bins, plans } = await rows(p.database);
      const key = Buffer.from(readFileSync(p.keyFile, 'utf8').trim(), 'base64');
      assert.deepEqual(
        keys.map((k) => k.fingerprint),
        [cardDataKeyFingerprint(key)],
      );
      assert.deepEqual(bins, DEFAULT_BINS);
      assert.equal(plans, 3);
      assert.equal(statSync(p.keyFile).mode & 0o777, 0o600);
    }
  });

  test('processes starting at once on a migrated database with no key yet all take one key, written whole and once', async (ctx) => {
    for (let round = 0; round < 4; round++) {
      const p = place(ctx);
      const database = openDatabase(p.database);
      await migrateToLatest(database.db);
      await database.close();
      const exits = await startTogether(p, 4);
      for (const exit of exits) assert.equal(exit.code, 0, `round ${round}: ${exit.stderr}`);
      const key = Buffer.from(readFileSync(p.keyFile, 'utf8').trim(), 'base64');
      assert.deepEqual(
        (await rows(p.database)).keys.map((k) => k.fingerprint),
        [cardDataKeyFingerprint(key)],
      );
      assert.deepEqual(
        readdirSync(path.dirname(p.keyFile)).filter((f) => f.includes('.key')),
        ['card-data.key'],
        'no temporary key file is left',
      );
    }
  });

  test('processes starting at once on a fresh Postgres schema all come up: one migration, one fingerprint, one seed', {
    skip: withoutPostgres,
  }, async (ctx) => {
    const baseUrl = process.env.TEST_DATABASE_URL!;
    for (let round = 0; round < 2; round++) {
      const p = place(ctx);
      const schema = await freshPostgresSchema(baseUrl);
      try {
        const exits = await whileNoSchemaIsDropped(baseUrl, () => startTogether(p, 3, { DATABASE_URL: schema.url }));
        for (const exit of exits) assert.equal(exit.code, 0, `round ${round}: ${exit.stderr}`);
        const { keys, bins, plans } = await rows(schema.url);
        assert.equal(keys.length, 1);
        assert.deepEqual(bins, DEFAULT_BINS);
        assert.equal(plans, 3);
      } finally {
        await schema.drop();
      }
    }
  });
});
