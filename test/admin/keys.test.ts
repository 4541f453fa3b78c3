import type { Kysely } from 'kysely';
import { type InboxTables, SEALED, sealContext } from '../../src/bot/runtime/inbox-store.js';
import { botTables } from '../../src/bot/store/tables.js';
import { linkTokenContext } from '../../src/bot/store/sealed-tokens.js';
import { saveLink } from '../../src/bot/store/chat-links.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { runAdmin } from '../../src/admin/run.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { reencryptCardData } from '../../src/core/keys/card-data-keys.js';
import { CardDataKeyError, cardDataKeyFingerprint, createCardDataCipher } from '../../src/core/keys/secrets.js';
import { dialects, freshPostgresSchema, whileNoSchemaIsDropped, type Dialect } from '../core/dialects.js';
import { newCard, newCustomer, type Customer } from '../helpers/core.js';
import { sealedOld } from '../helpers/sealed-values.js';
import { ENTRY, nodeArgs } from '../helpers/processes.js';

// `npm run admin -- keys rotate --new-key-file F`: every card's PAN and CVV re-encrypted under the new
// key in one transaction, the new key put in place, the old one kept and refused from then on.

interface Place {
  dir: string;
  url: string;
  keyFile: string;
  /** Runs `work` while the test schemas may not be dropped (Postgres; see dialects.ts). */
  guard<T>(work: () => Promise<T>): Promise<T>;
}

async function place(ctx: TestContext, dialect: Dialect): Promise<Place> {
  const dir = mkdtempSync(path.join(tmpdir(), 'keys-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const keyFile = path.join(dir, 'data', 'card-data.key');
  if (dialect === 'sqlite') return { dir, keyFile, url: path.join(dir, 'data', 'cards.db'), guard: (work) => work() };
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const schema = await freshPostgresSchema(baseUrl);
  ctx.after(() => schema.drop());
  return { dir, keyFile, url: schema.url, guard: (work) => whileNoSchemaIsDropped(baseUrl, work) };
}

function open(p: Place): Promise<CoreRuntime> {
  return p.guard(() => startCore({ databaseUrl: p.url, cardDataKey: { file: p.keyFile } }));
}

async function using<T>(p: Place, work: (t: CoreRuntime) => Promise<T>): Promise<T> {
  const t = await open(p);
  try {
    return await work(t);
  } finally {
    await t.close();
  }
}

const keyText = (key: Buffer) => `${key.toString('base64')}\n`;
const readKey = (file: string) => Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');

function newKeyFile(p: Place, name = 'new.key', mode = 0o600): { file: string; key: Buffer } {
  const key = randomBytes(32);
  const file = path.join(p.dir, name);
  writeFileSync(file, keyText(key), { mode });
  return { file, key };
}

async function admin(p: Place, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin([...argv, '--json'], () => open(p), { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, json: JSON.parse(out.join('\n') || '{}') as Record<string, any>, err: err.join('\n') };
}

/** The CLI in its own process, as an operator runs it. */
function cli(p: Place, ...argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return p.guard(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [...nodeArgs(ENTRY.admin), ...argv], {
          cwd: p.dir,
          env: { PATH: process.env.PATH ?? '', DATABASE_URL: p.url, CARD_DATA_KEY_FILE: p.keyFile },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      }),
  );
}

interface Holdings {
  alice: Customer;
  cards: { id: string; pan: string; cvv: string }[];
}

/** Three cards under the generated key: one sealed as `v1`, one as `v2`, one as today. */
async function threeCards(p: Place): Promise<Holdings> {
  return using(p, async (t) => {
    const alice = await newCustomer(t, 500_000);
    const key = readKey(p.keyFile);
    const cards = [];
    for (const version of ['v1', 'v2', 'v3'] as const) {
      const card = await newCard(t, alice, version);
      const details = await t.core.getSensitiveDetails(alice.caller, card.id);
      if (version !== 'v3') {
        await t.database.db
          .updateTable('cards')
          .set({
            pan_encrypted: sealedOld(version, key, details.pan, `${card.id}:pan`),
            cvv_encrypted: sealedOld(version, key, details.cvv, `${card.id}:cvv`),
          })
          .where('id', '=', card.id)
          .execute();
      }
      cards.push({ id: card.id, pan: details.pan, cvv: details.cvv });
    }
    return { alice, cards };
  });
}

async function sealedValues(t: CoreRuntime): Promise<string[]> {
  const rows = await t.database.db.selectFrom('cards').select(['pan_encrypted', 'cvv_encrypted']).execute();
  return rows.flatMap((r) => [r.pan_encrypted, r.cvv_encrypted]);
}

for (const dialect of dialects()) {
  describe(`keys rotate (${dialect})`, () => {
    test('rotation re-encrypts every card, v1 and v2 values too, under the new key, and each value names it', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const oldKey = readKey(p.keyFile);
      const next = newKeyFile(p);

      const rotated = await cli(p, 'keys', 'rotate', '--new-key-file', next.file, '--json');
      assert.equal(rotated.code, 0, rotated.stdout + rotated.stderr);
      const answer = JSON.parse(rotated.stdout) as Record<string, unknown>;
      assert.deepEqual(
        { ok: answer.ok, from: answer.from, to: answer.to, cards: answer.cards },
        { ok: true, from: cardDataKeyFingerprint(oldKey), to: cardDataKeyFingerprint(next.key), cards: 3 },
      );

      assert.deepEqual(readKey(p.keyFile), next.key, 'the new key is in the key file');
      assert.equal(statSync(p.keyFile).mode & 0o777, 0o600);
      await using(p, async (t) => {
        for (const sealed of await sealedValues(t)) assert.ok(sealed.startsWith(`v3.${cardDataKeyFingerprint(next.key)}.`), sealed);
        for (const card of cards) {
          const details = await t.core.getSensitiveDetails(alice.caller, card.id);
          assert.deepEqual({ pan: details.pan, cvv: details.cvv }, { pan: card.pan, cvv: card.cvv });
        }
        const keys = await t.database.db
          .selectFrom('card_data_keys')
          .select(['fingerprint', 'state'])
          .orderBy('created_at')
          .orderBy('state')
          .execute();
        assert.deepEqual(
          keys.map((k) => [k.fingerprint, k.state]).sort(),
          [
            [cardDataKeyFingerprint(oldKey), 'retired'],
            [cardDataKeyFingerprint(next.key), 'current'],
          ].sort(),
        );
      });
    });

    test('after a rotation the old key is kept beside the key file (mode 0600) and refused at start', async (ctx) => {
      const p = await place(ctx, dialect);
      await threeCards(p);
      const oldKey = readKey(p.keyFile);
      const rotated = await admin(p, 'keys', 'rotate', '--new-key-file', newKeyFile(p).file);
      assert.equal(rotated.code, 0, rotated.err);
      const kept = `${p.keyFile}.old-${cardDataKeyFingerprint(oldKey)}`;
      assert.equal(rotated.json.retiredKeyFile, kept);
      assert.deepEqual((await admin(p, 'keys', 'status')).json, { ok: true, fingerprint: rotated.json.to, file: p.keyFile });
      assert.deepEqual(readKey(kept), oldKey);
      assert.equal(statSync(kept).mode & 0o777, 0o600);

      writeFileSync(p.keyFile, keyText(oldKey));
      await assert.rejects(
        open(p),
        (error: unknown) => error instanceof CardDataKeyError && /retired by a key rotation/.test(error.message),
      );
      const refused = await cli(p, 'users', 'list');
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /restore the key file from your backup; do not generate a new one/);
    });

    test('rotation re-seals what the bot keeps under the key: remote tokens in chat links, stored updates holding a token', async (ctx) => {
      const p = await place(ctx, dialect);
      await using(p, async (t) => {
        // The key file is made on the first open.
        const old = createCardDataCipher(readKey(p.keyFile));
        await saveLink(
          botTables(t.database.db),
          { chatId: 4242, userId: 'remote:x', tokenHash: 'h', sealedToken: old.encrypt('their-token', linkTokenContext(4242)) },
          new Date(),
        );
        await (t.database.db as unknown as Kysely<InboxTables>)
          .insertInto('bot_updates')
          .values({
            update_id: 777,
            chat_key: 'chat:4242',
            payload: `${SEALED}${old.encrypt('{"update_id":777}', sealContext(777))}`,
            received_at: new Date().toISOString(),
            handled_at: null,
          })
          .execute();
      });
      const next = newKeyFile(p);
      const rotated = await admin(p, 'keys', 'rotate', '--new-key-file', next.file);
      assert.equal(rotated.code, 0, rotated.err);
      const fresh = createCardDataCipher(next.key);
      await using(p, async (t) => {
        const link = await (t.database.db as unknown as Kysely<InboxTables>)
          .selectFrom('bot_chat_links')
          .select('sealed_token')
          .where('chat_id', '=', 4242)
          .executeTakeFirstOrThrow();
        assert.equal(fresh.decrypt(link.sealed_token!, linkTokenContext(4242)), 'their-token');
        const update = await (t.database.db as unknown as Kysely<InboxTables>)
          .selectFrom('bot_updates')
          .select('payload')
          .where('update_id', '=', 777)
          .executeTakeFirstOrThrow();
        assert.equal(fresh.decrypt(update.payload.slice(SEALED.length), sealContext(777)), '{"update_id":777}');
      });
    });

    test('keys rotate prints where the retired key is kept', async (ctx) => {
      const p = await place(ctx, dialect);
      await threeCards(p);
      const oldKey = readKey(p.keyFile);
      const rotated = await cli(p, 'keys', 'rotate', '--new-key-file', newKeyFile(p).file);
      assert.equal(rotated.code, 0, rotated.stderr);
      const kept = `${p.keyFile}.old-${cardDataKeyFingerprint(oldKey)}`;
      assert.ok(rotated.stdout.includes(`The retired key ${cardDataKeyFingerprint(oldKey)} is kept in ${kept}`), rotated.stdout);
      assert.deepEqual(readKey(kept), oldKey);
    });

    test('keys rotate --no-keep-retired deletes the retired key once every card is re-sealed', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const oldKey = readKey(p.keyFile);
      const next = newKeyFile(p);
      const rotated = await cli(p, 'keys', 'rotate', '--new-key-file', next.file, '--no-keep-retired', '--json');
      assert.equal(rotated.code, 0, rotated.stdout + rotated.stderr);
      const answer = JSON.parse(rotated.stdout) as Record<string, unknown>;
      const retired = `${p.keyFile}.old-${cardDataKeyFingerprint(oldKey)}`;
      assert.deepEqual(
        { file: answer.retiredKeyFile, kept: answer.retiredKeyKept, cards: answer.cards },
        { file: retired, kept: false, cards: 3 },
      );
      assert.equal(existsSync(retired), false, 'the retired key is gone');
      assert.deepEqual(readKey(p.keyFile), next.key);
      await using(p, async (t) => {
        for (const card of cards) assert.equal((await t.core.getSensitiveDetails(alice.caller, card.id)).pan, card.pan);
      });
    });

    test('keys rotate --no-keep-retired that fails keeps the retired key and the old key in force', async (ctx) => {
      const p = await place(ctx, dialect);
      const { cards } = await threeCards(p);
      const oldKey = readKey(p.keyFile);
      await using(p, (t) => t.database.db.updateTable('cards').set({ pan_encrypted: 'garbled' }).where('id', '=', cards[2]!.id).execute());
      const rotated = await cli(p, 'keys', 'rotate', '--new-key-file', newKeyFile(p).file, '--no-keep-retired');
      assert.notEqual(rotated.code, 0);
      assert.deepEqual(readKey(p.keyFile), oldKey);
      assert.deepEqual(readKey(`${p.keyFile}.old-${cardDataKeyFingerprint(oldKey)}`), oldKey, 'kept: the rotation did not finish');
    });

    test('once a rotation has re-sealed them, v1 and v2 values are refused: by reads, and by the next rotation', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const next = newKeyFile(p);
      assert.equal((await admin(p, 'keys', 'rotate', '--new-key-file', next.file)).code, 0);
      // Something other than the service writes values in the older formats, under the right key.
      const [v1Card, v2Card] = cards as [(typeof cards)[0], (typeof cards)[0]];
      await using(p, async (t) => {
        for (const [version, card] of [
          ['v1', v1Card],
          ['v2', v2Card],
        ] as const) {
          await t.database.db
            .updateTable('cards')
            .set({ pan_encrypted: sealedOld(version, next.key, card.pan, `${card.id}:pan`) })
            .where('id', '=', card.id)
            .execute();
        }
      });
      await using(p, async (t) => {
        for (const [version, card] of [
          ['v1', v1Card],
          ['v2', v2Card],
        ] as const) {
          await assert.rejects(t.core.getSensitiveDetails(alice.caller, card.id), new RegExp(`sealed in the ${version} format is refused`));
        }
      });
      const again = newKeyFile(p, 'again.key');
      await assert.rejects(admin(p, 'keys', 'rotate', '--new-key-file', again.file), /sealed in the v1 format is refused/);
      assert.deepEqual(readKey(p.keyFile), next.key, 'the refused rotation changed nothing');
    });

    test('a new key file that is missing, open to others, not a key, or the current key is refused, changing nothing', async (ctx) => {
      const p = await place(ctx, dialect);
      await threeCards(p);
      const before = await using(p, sealedValues);
      const current = readKey(p.keyFile);
      const sameKey = path.join(p.dir, 'same.key');
      writeFileSync(sameKey, keyText(current), { mode: 0o600 });
      const notAKey = path.join(p.dir, 'short.key');
      writeFileSync(notAKey, 'c2hvcnQ=\n', { mode: 0o600 });
      const cases: [string, RegExp][] = [
        [path.join(p.dir, 'absent.key'), /does not exist/],
        [newKeyFile(p, 'open.key', 0o644).file, /chmod 600/],
        [notAKey, /not 32 bytes of base64/],
        [sameKey, /nothing to rotate/],
      ];
      for (const [file, reason] of cases) {
        await assert.rejects(
          admin(p, 'keys', 'rotate', '--new-key-file', file),
          (error: unknown) => error instanceof CardDataKeyError && reason.test(error.message),
        );
      }
      assert.deepEqual(readKey(p.keyFile), current);
      assert.deepEqual(await using(p, sealedValues), before);
    });

    test('a process started before the rotation seals no card under the retired key, and reads rotated cards with a key-id error', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const stale = await open(p);
      ctx.after(() => stale.close());
      assert.equal((await admin(p, 'keys', 'rotate', '--new-key-file', newKeyFile(p).file)).code, 0);
      await assert.rejects(
        newCard(stale, alice, 'After'),
        (error: unknown) => error instanceof CardDataKeyError && /restart/.test(error.message),
      );
      await assert.rejects(
        stale.core.getSensitiveDetails(alice.caller, cards[0]!.id),
        (error: unknown) => error instanceof CardDataKeyError && /sealed under/.test(error.message),
      );
    });

    test('a rotation that committed but did not swap the key file is finished by the next start', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const oldKey = readKey(p.keyFile);
      const next = randomBytes(32);
      // The crash: the new key staged, the database committed, the key file not yet swapped.
      writeFileSync(`${p.keyFile}.next`, keyText(next), { mode: 0o600 });
      await using(p, (t) =>
        reencryptCardData(
          t.database.db,
          createCardDataCipher(oldKey, { readsOlderFormats: true }),
          createCardDataCipher(next),
          t.clock.now().toISOString(),
        ),
      );
      assert.deepEqual(readKey(p.keyFile), oldKey);

      await using(p, async (t) => {
        assert.equal(t.cardDataKey.fingerprint, cardDataKeyFingerprint(next));
        assert.equal((await t.core.getSensitiveDetails(alice.caller, cards[0]!.id)).pan, cards[0]!.pan);
      });
      assert.deepEqual(readKey(p.keyFile), next);
      assert.equal(existsSync(`${p.keyFile}.next`), false);
    });

    test('a rotation that stopped before its commit leaves the old key in force, whatever it staged', async (ctx) => {
      const p = await place(ctx, dialect);
      const { alice, cards } = await threeCards(p);
      const oldKey = readKey(p.keyFile);
      writeFileSync(`${p.keyFile}.next`, keyText(randomBytes(32)), { mode: 0o600 });
      await using(p, async (t) => {
        assert.equal(t.cardDataKey.fingerprint, cardDataKeyFingerprint(oldKey));
        assert.equal((await t.core.getSensitiveDetails(alice.caller, cards[1]!.id)).cvv, cards[1]!.cvv);
      });
      assert.deepEqual(readKey(p.keyFile), oldKey);
    });
  });
}

describe('backup --to', () => {
  test('refuses a target in the folder of the card-data key, through a symbolic link too, and writes nothing there', async (ctx) => {
    const p = await place(ctx, 'sqlite');
    await threeCards(p);
    const keyFolder = path.dirname(p.keyFile);
    mkdirSync(path.join(keyFolder, 'sub'));
    symlinkSync(keyFolder, path.join(p.dir, 'link'));
    for (const target of [
      path.join(keyFolder, 'copy.db'),
      path.join(keyFolder, 'sub', 'copy.db'),
      path.join(p.dir, 'link', 'copy.db'),
      path.join(p.dir, 'link', 'new-folder', 'copy.db'),
    ]) {
      const refused = await admin(p, 'backup', '--to', target);
      assert.equal(refused.code, 1, target);
      assert.match(String(refused.json.error), /is in .*, the card-data key's folder/, target);
      assert.equal(existsSync(target), false, target);
    }
    mkdirSync(path.join(p.dir, 'backups'));
    const target = path.join(p.dir, 'backups', 'copy.db');
    const done = await admin(p, 'backup', '--to', target);
    assert.equal(done.code, 0, done.err);
    assert.ok(statSync(target).size > 0);
  });

  test('refuses a missing folder, a folder and an existing file with the fix (--force overwrites), writing nothing', async (ctx) => {
    const p = await place(ctx, 'sqlite');
    await threeCards(p);
    const missing = path.join(p.dir, 'no-such-folder', 'copy.db');
    const noFolder = await admin(p, 'backup', '--to', missing);
    assert.equal(noFolder.code, 1);
    assert.match(String(noFolder.json.error), /the folder .*no-such-folder does not exist: create it first \(mkdir -p /);
    assert.equal(existsSync(path.dirname(missing)), false);

    const backups = path.join(p.dir, 'backups');
    mkdirSync(backups);
    const folder = await admin(p, 'backup', '--to', backups);
    assert.equal(folder.code, 1);
    assert.match(String(folder.json.error), /backups is a folder: give --to a file name in it/);

    const target = path.join(backups, 'copy.db');
    writeFileSync(target, 'an older backup');
    const exists = await admin(p, 'backup', '--to', target);
    assert.equal(exists.code, 1);
    assert.match(String(exists.json.error), /copy\.db already exists: add --force to overwrite it/);
    assert.equal(readFileSync(target, 'utf8'), 'an older backup', 'left as it was');

    // As the operator reads it: a `Refused:` line naming the fix.
    const err: string[] = [];
    const human = await runAdmin(['backup', '--to', target], () => open(p), { out: () => {}, err: (s) => err.push(s) });
    assert.equal(human, 1);
    assert.match(err.join('\n'), /^Refused: .*copy\.db already exists: add --force to overwrite it/);

    const forced = await admin(p, 'backup', '--to', target, '--force');
    assert.equal(forced.code, 0, forced.err);
    assert.equal(statSync(target).mode & 0o777, 0o600);
    const copy = await startCore({ databaseUrl: target, cardDataKey: { file: p.keyFile } });
    try {
      assert.equal((await copy.admin.listCards()).length, 3);
    } finally {
      await copy.close();
    }
    assert.deepEqual(
      readdirSync(backups).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
  });
});
