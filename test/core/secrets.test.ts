import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CardDataKeyError, cardDataKeyFingerprint, createCardDataCipher } from '../../src/core/keys/secrets.js';
import { sealedOld } from '../helpers/sealed-values.js';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('card data at rest', () => {
  test('a key is told by a fingerprint that is stable, differs between keys and does not reveal the key', () => {
    assert.equal(cardDataKeyFingerprint(keyA), cardDataKeyFingerprint(Buffer.from(keyA)));
    assert.notEqual(cardDataKeyFingerprint(keyA), cardDataKeyFingerprint(keyB));
    assert.match(cardDataKeyFingerprint(keyA), /^[0-9a-f]{16}$/);
    assert.ok(!keyA.toString('hex').includes(cardDataKeyFingerprint(keyA)));
  });

  test('a value names the key that sealed it and reads back with that key', () => {
    const cipher = createCardDataCipher(keyA);
    const sealed = cipher.encrypt('4242424242424242', 'card-1:pan');
    assert.equal(sealed.split('.')[0], 'v3');
    assert.equal(sealed.split('.')[1], cardDataKeyFingerprint(keyA));
    assert.ok(!sealed.includes('4242424242424242'));
    assert.equal(cipher.decrypt(sealed, 'card-1:pan'), '4242424242424242');
  });

  test('a value sealed under key A, presented to key B, is refused by its key id, not as garbled data', () => {
    const sealed = createCardDataCipher(keyA).encrypt('123', 'card-1:cvv');
    assert.throws(
      () => createCardDataCipher(keyB).decrypt(sealed, 'card-1:cvv'),
      (error: unknown) =>
        error instanceof CardDataKeyError &&
        error.message.includes(cardDataKeyFingerprint(keyA)) &&
        error.message.includes(cardDataKeyFingerprint(keyB)) &&
        !/authenticate/.test(error.message),
    );
  });

  test('a value moved to another card or field does not read, even under its own key', () => {
    const cipher = createCardDataCipher(keyA);
    assert.throws(() => cipher.decrypt(cipher.encrypt('123', 'card-1:cvv'), 'card-2:cvv'), /unable to authenticate/);
  });

  test('values sealed before values named their key (v1, v2) still read with the current key until a rotation', () => {
    const cipher = createCardDataCipher(keyA, { readsOlderFormats: true });
    assert.equal(cipher.decrypt(sealedOld('v1', keyA, '5454545454545454', 'card-1:pan'), 'card-1:pan'), '5454545454545454');
    assert.equal(cipher.decrypt(sealedOld('v2', keyA, '321', 'card-1:cvv'), 'card-1:cvv'), '321');
  });

  test('after a rotation (readsOlderFormats: false) v1 and v2 values are refused by name, under the right key too', () => {
    const cipher = createCardDataCipher(keyA, { readsOlderFormats: false });
    for (const version of ['v1', 'v2'] as const) {
      assert.throws(
        () => cipher.decrypt(sealedOld(version, keyA, '5454545454545454', 'card-1:pan'), 'card-1:pan'),
        new RegExp(`sealed in the ${version} format is refused: a key rotation has re-sealed every value`),
      );
    }
  });

  test('a tag shorter than 16 bytes is refused, even one cut from the true tag (GCM would check only its bytes)', () => {
    const cipher = createCardDataCipher(keyA);
    const [version, keyId, iv, tag, body] = cipher.encrypt('4242424242424242', 'card-1:pan').split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    for (const bytes of [4, 8, 12, 15]) {
      const cut = Buffer.from(tag, 'base64').subarray(0, bytes).toString('base64');
      assert.throws(
        () => cipher.decrypt([version, keyId, iv, cut, body].join('.'), 'card-1:pan'),
        /Unreadable card data/,
        `${bytes} bytes`,
      );
    }
    const older = createCardDataCipher(keyA, { readsOlderFormats: true });
    const [v2, iv2, tag2, body2] = sealedOld('v2', keyA, '321', 'card-1:cvv').split('.') as [string, string, string, string];
    const cut = Buffer.from(tag2, 'base64').subarray(0, 4).toString('base64');
    assert.throws(() => older.decrypt([v2, iv2, cut, body2].join('.'), 'card-1:cvv'), /Unreadable card data/);
  });

  test('a value of no known shape is refused as unreadable', () => {
    const cipher = createCardDataCipher(keyA);
    for (const sealed of ['', 'v9.a.b.c', 'v3.a.b.c', 'v2.a.b', `v3.${cipher.fingerprint}..b.c`]) {
      assert.throws(() => cipher.decrypt(sealed, 'card-1:pan'), /Unreadable card data/, sealed);
    }
  });
});
