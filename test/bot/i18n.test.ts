import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LOCALES_FOLDER } from '../../src/bot/i18n.js';
import { REFUSAL_HINTS } from '../../src/bot/errors.js';

const keysOf = (locale: string) =>
  new Set(
    readFileSync(path.join(LOCALES_FOLDER, `${locale}.ftl`), 'utf8')
      .split('\n')
      .map((line) => /^([a-z][\w-]*)\s*=/.exec(line)?.[1])
      .filter((key): key is string => key !== undefined),
  );

describe('texts', () => {
  it('Russian has every English text and no other', () => {
    assert.deepEqual([...keysOf('ru')].sort(), [...keysOf('en')].sort());
  });

  it('every refusal hint exists as a text', () => {
    const en = keysOf('en');
    for (const key of Object.values(REFUSAL_HINTS)) assert.ok(en.has(key), key);
  });
});
