import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoTime } from '../src/infra/clock.js';

test('isoTime writes what toISOString writes, given a date or its milliseconds, across minutes, days, years, leap days and the edges of four-digit years', () => {
  const now = Date.now();
  const moments = [
    0,
    1,
    999,
    59_999,
    60_000,
    86_399_999,
    951_782_399_999, // 2000-02-28T23:59:59.999Z, then the leap day
    951_782_400_000,
    253_402_300_799_999, // 9999-12-31T23:59:59.999Z
    253_402_300_800_000, // +010000-01-01
    -1,
    -62_198_755_200_001,
  ];
  // Steps of every size from here: the same minute, the next one, back again.
  for (let step = 1; step < 10_000_000; step *= 7) moments.push(now + step, now - step, now + step);
  for (let i = 0; i < 20_000; i++) moments.push(Math.floor(Math.random() * 2 ** 46) - 2 ** 44);
  for (const ms of moments) {
    assert.equal(isoTime(new Date(ms)), new Date(ms).toISOString(), `at ${ms}`);
    assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}, given as a number`);
  }
});

test('isoTime throws for an invalid date, as toISOString does', () => {
  assert.throws(() => isoTime(new Date(Number.NaN)), RangeError);
  assert.throws(() => isoTime(Number.NaN), RangeError);
});
