import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { cardDataKeyLocation } from '../src/app/card-data-key-location.js';

// Where the card-data key is: by default in a folder of its own, so a copy of the database's folder
// does not carry the key; an older install's key beside the database is still found, and warned about.

function folder(ctx: TestContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'key-location-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function olderKey(dir: string): string {
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const file = path.join(dir, 'data', 'card-data.key');
  writeFileSync(file, 'key\n', { mode: 0o600 });
  return file;
}

describe('the card-data key location', () => {
  test('by default the key is keys/card-data.key, not in the folder of the default database data/cards.db', (ctx) => {
    const dir = folder(ctx);
    assert.deepEqual(cardDataKeyLocation(undefined, 'data/cards.db', dir), {
      file: path.join(dir, 'keys', 'card-data.key'),
      warning: undefined,
    });
  });

  test('an older install whose key is data/card-data.key keeps it, and the start warns that it sits beside the database', (ctx) => {
    const dir = folder(ctx);
    const file = olderKey(dir);
    const location = cardDataKeyLocation(undefined, 'data/cards.db', dir);
    assert.equal(location.file, file);
    assert.match(location.warning ?? '', /sits beside the database .*cards\.db: a copy of that folder carries both/);
    assert.match(location.warning ?? '', /Moving the key/);
  });

  test('the warning points to a document and a heading in it that exist', (ctx) => {
    const dir = folder(ctx);
    olderKey(dir);
    const warning = cardDataKeyLocation(undefined, 'data/cards.db', dir).warning ?? '';
    const [, document, heading] = /\(([\w./-]+\.md), "([^"]+)"\)/.exec(warning) ?? [];
    assert.ok(document && heading, `names a document and its heading: ${warning}`);
    const root = path.resolve(import.meta.dirname, '..');
    const text = readFileSync(path.join(root, document), 'utf8');
    assert.match(text, new RegExp(`^#+ ${heading}\\s*$`, 'm'), `${document} has the heading "${heading}"`);
  });

  test('on Postgres the older default is still found, and the start says where the key now belongs', (ctx) => {
    const dir = folder(ctx);
    const file = olderKey(dir);
    const location = cardDataKeyLocation(undefined, 'postgres://cards@db/cards', dir);
    assert.equal(location.file, file);
    assert.match(location.warning ?? '', new RegExp(`older default ${file}, not ${path.join(dir, 'keys', 'card-data.key')}`));
  });

  test('once moved to keys/, the key there is used and nothing is said, whatever is left in data/', (ctx) => {
    const dir = folder(ctx);
    olderKey(dir);
    mkdirSync(path.join(dir, 'keys'));
    writeFileSync(path.join(dir, 'keys', 'card-data.key'), 'key\n', { mode: 0o600 });
    assert.deepEqual(cardDataKeyLocation(undefined, 'data/cards.db', dir), {
      file: path.join(dir, 'keys', 'card-data.key'),
      warning: undefined,
    });
  });

  test('a CARD_DATA_KEY_FILE in the SQLite database folder is warned about, through a symbolic link too; one apart is not', (ctx) => {
    const dir = folder(ctx);
    mkdirSync(path.join(dir, 'data'));
    symlinkSync(path.join(dir, 'data'), path.join(dir, 'alias'));
    const beside = cardDataKeyLocation('alias/card-data.key', path.join(dir, 'data', 'cards.db'), dir);
    assert.equal(beside.file, path.join(dir, 'alias', 'card-data.key'));
    assert.match(beside.warning ?? '', /sits beside the database/);
    assert.equal(cardDataKeyLocation('/etc/cards/card-data.key', path.join(dir, 'data', 'cards.db'), dir).warning, undefined);
    assert.equal(cardDataKeyLocation('data/card-data.key', 'postgres://cards@db/cards', dir).warning, undefined);
    assert.equal(cardDataKeyLocation('data/card-data.key', ':memory:', dir).warning, undefined);
  });
});
