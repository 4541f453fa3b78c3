import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTROL_AMOUNT_MAX } from '../../src/bot/card-service/from-core.js';
import { type ControlsCallback, decodeControls, encodeControls, fixButtonData } from '../../src/bot/ui/controls-callbacks.js';

const cardId = '0192f3a4-5b6c-7d8e-9f01-23456789abcd';

/** The buttons of the limits and auto top-up screens and of the decline alerts' fixes: what they carry. */
describe('controls and fix buttons’ callback data', () => {
  const all: ControlsCallback[] = [
    { kind: 'limits', cardId },
    { kind: 'limit-presets', cardId, control: 'daily_limit' },
    { kind: 'limit-set', cardId, control: 'per_purchase_limit', to: 100_000 },
    { kind: 'limit-set', cardId, control: 'monthly_limit', to: null },
    { kind: 'category', cardId, category: 'money_transfer' },
    { kind: 'auto-topup', cardId },
    { kind: 'auto-topup-switch', cardId, enabled: true },
    { kind: 'auto-topup-switch', cardId, enabled: false },
    { kind: 'auto-topup-presets', cardId, field: 'minBalance' },
    { kind: 'auto-topup-set', cardId, field: 'topupAmount', to: 25_000 },
    { kind: 'fix', cardId, fix: { kind: 'topup', amount: 1_250 } },
    { kind: 'fix', cardId, fix: { kind: 'unfreeze' } },
    { kind: 'fix', cardId, fix: { kind: 'raise_limit', control: 'monthly_limit', to: 123_456_789 } },
    { kind: 'fix', cardId, fix: { kind: 'allow_category', category: 'digital_goods' } },
    { kind: 'fix', cardId, fix: { kind: 'new_card_like' } },
  ];

  it('each button decodes to what it was drawn with, within Telegram’s 64 bytes', () => {
    for (const data of all) {
      const raw = encodeControls(data);
      assert.ok(Buffer.byteLength(raw) <= 64, raw);
      assert.deepEqual(decodeControls(raw), data);
    }
  });

  it('a fix a press could not carry out has no button: an amount past 9 digits, a limit past what the controls accept', () => {
    const topup = (amount: number) => fixButtonData(cardId, { kind: 'topup', amount });
    const raise = (to: number) => fixButtonData(cardId, { kind: 'raise_limit', control: 'daily_limit', to });
    assert.deepEqual(decodeControls(topup(999_999_999)!), { kind: 'fix', cardId, fix: { kind: 'topup', amount: 999_999_999 } });
    assert.equal(topup(1_000_000_000), undefined);
    assert.deepEqual(decodeControls(raise(CONTROL_AMOUNT_MAX)!), {
      kind: 'fix',
      cardId,
      fix: { kind: 'raise_limit', control: 'daily_limit', to: CONTROL_AMOUNT_MAX },
    });
    assert.equal(raise(CONTROL_AMOUNT_MAX + 1), undefined);
    assert.equal(fixButtonData(cardId, { kind: 'unfreeze' }), `f:${cardId}:u`);
  });

  it('tampered data is nothing (passed on, answered as an expired button)', () => {
    for (const raw of [
      `k:${cardId}:x`,
      `k:${cardId}:c:casino`,
      `k:${cardId}:d:-5`,
      `a:${cardId}:b:1.5`,
      `f:${cardId}:t`,
      `f:${cardId}:rq:5`,
      `f:${cardId}:u:1`,
      'k:',
      `k:${cardId}:d:1:2`,
    ]) {
      assert.equal(decodeControls(raw), undefined, raw);
    }
  });
});
