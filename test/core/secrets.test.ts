import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CardDataKeyError, cardDataKeyFingerprint, createCardDataCipher } from '../../src/core/secrets.js';
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

  test('values sealed before values named their key (v1, v2) still read with the current key', () => {
    const cipher = createCardDataCipher(keyA);
    assert.equal(cipher.decrypt(sealedOld('v1', keyA, '5454545454545454', 'card-1:pan'), 'card-1:pan'), '5454545454545454');
    assert.equal(cipher.decrypt(sealedOld('v2', keyA, '321', 'card-1:cvv'), 'card-1:cvv'), '321');
  });

  test('a value of no known shape is refused as unreadable', () => {
    const cipher = createCardDataCipher(keyA);
    for (const sealed of ['', 'v9.a.b.c', 'v3.a.b.c', 'v2.a.b', `v3.${cipher.fingerprint}..b.c`]) {
      assert.throws(() => cipher.decrypt(sealed, 'card-1:pan'), /Unreadable card data/, sealed);
    }
  });
});
