import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatAmount, percentOf, toAmount, toCents } from '../../src/core/ledger/money.js';

describe('money', () => {
  test('decimal amounts become integer cents; more than 2 decimals or non-finite is null', () => {
    assert.equal(toCents(5), 500);
    assert.equal(toCents(0.29), 29);
    assert.equal(toCents(10_000.01), 1_000_001);
    assert.equal(toCents(5.001), null);
    // A third decimal is refused however large the amount (a relative tolerance once let these through).
    assert.equal(toCents(1_000.001), null);
    assert.equal(toCents(5_000.001), null);
    assert.equal(toCents(9_999.999), null);
    assert.equal(toCents(9_999.99), 999_999);
    assert.equal(toCents(-0), 0);
    assert.equal(toCents(Number.POSITIVE_INFINITY), null);
    assert.equal(toCents(Number.NaN), null);
  });

  test('every amount with at most 2 decimals, typed as text and parsed, is exact in cents', () => {
    for (let cents = 0; cents <= 1_000_001; cents += 7) {
      const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
      assert.equal(toCents(Number(text)), cents, text);
      assert.equal(toCents(Number(`${text}1`)), null, `${text}1`);
    }
  });

  test('cents format with exactly two decimals', () => {
    assert.equal(formatAmount(0), '0.00');
    assert.equal(formatAmount(5), '0.05');
    assert.equal(formatAmount(1_568), '15.68');
    assert.equal(formatAmount(100_000), '1000.00');
    assert.equal(formatAmount(-250), '-2.50');
    assert.equal(toAmount(1_999), 19.99);
  });

  test('percentages round half-up to the cent', () => {
    assert.equal(percentOf(1_020, 250), 26); // 25.5
    assert.equal(percentOf(1_010, 250), 25); // 25.25
    assert.equal(percentOf(1_050, 300), 32); // 31.5
    assert.equal(percentOf(1_000, 5_000), 500);
    assert.equal(percentOf(1, 5_000), 1); // 0.5
    assert.equal(percentOf(0, 250), 0);
  });
});
