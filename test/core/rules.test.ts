import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultCoreSettings } from '../../src/core/settings.js';
import { inputGuards } from '../../src/core/rules/schemas.js';
import {
  amountBoundsRefusal,
  cardCoverRefusal,
  closeStateRefusal,
  cooldownSecondsLeft,
  couponRefusal,
  creationFeeRefusal,
  initialBalanceRefusal,
  planLimitRefusal,
  topupCooldownRefusal,
  walletCoverRefusal,
  withdrawCooldownRefusal,
} from '../../src/core/rules/rules.js';

describe('the named checks', () => {
  it('planLimitRefusal: up to the limit passes; past it, CARD_LIMIT_EXCEEDED with the room left', () => {
    assert.equal(planLimitRefusal({ deposit: 60_000, limit: 100_000 }, 40_000), undefined);
    const refused = planLimitRefusal({ deposit: 60_000, limit: 100_000 }, 50_000);
    assert.equal(refused?.code, 'CARD_LIMIT_EXCEEDED');
    assert.deepEqual(refused?.params, { deposit: 60_000, limit: 100_000, available: 40_000 });
    assert.equal(refused?.message, 'Topup would exceed card limit. Current deposit: 600.00, Limit: 1000.00, Available: 400.00');
    assert.deepEqual(planLimitRefusal({ deposit: 120_000, limit: 100_000 }, 1)?.params.available, 0);
  });

  it('initialBalanceRefusal: an initial balance above the plan limit is INITIAL_BALANCE_OVER_LIMIT', () => {
    assert.equal(initialBalanceRefusal({ initialBalance: 100_000 }, { limit: 100_000 }), undefined);
    const refused = initialBalanceRefusal({ initialBalance: 100_001 }, { limit: 100_000 });
    assert.equal(refused?.code, 'INITIAL_BALANCE_OVER_LIMIT');
    assert.deepEqual(refused?.params, { initialBalance: 100_001, limit: 100_000 });
  });

  it('walletCoverRefusal: the amount and fee within the wallet pass; else INSUFFICIENT_WALLET_BALANCE; a database refusal always words one', () => {
    assert.equal(walletCoverRefusal({ amount: 50_000, fee: 1_280, available: 51_280 }), undefined);
    const refused = walletCoverRefusal({ amount: 50_000, fee: 1_280, available: 9_500 });
    assert.equal(refused?.code, 'INSUFFICIENT_WALLET_BALANCE');
    assert.deepEqual(refused?.params, { total: 51_280, amount: 50_000, fee: 1_280, available: 9_500 });
    assert.equal(refused?.message, 'Insufficient wallet balance. Required: 512.80 (topup: 500.00 + platform fee: 12.80), Available: 95.00');
    assert.equal(walletCoverRefusal({ amount: 1, fee: 0, available: 5 }, { refused: true })?.code, 'INSUFFICIENT_WALLET_BALANCE');
  });

  it('cardCoverRefusal: more than the card holds is INSUFFICIENT_CARD_BALANCE', () => {
    assert.equal(cardCoverRefusal({ amount: 3_000, available: 3_000 }), undefined);
    const refused = cardCoverRefusal({ amount: 4_000, available: 3_000 });
    assert.deepEqual([refused?.code, refused?.params], ['INSUFFICIENT_CARD_BALANCE', { available: 3_000, requested: 4_000 }]);
  });

  it('closeStateRefusal: a closed card is ALREADY_CLOSED, then one the provider has not issued is CARD_NOT_READY_CLOSE', () => {
    assert.equal(closeStateRefusal({ status: 'active', provider_ready: 1 }), undefined);
    assert.equal(closeStateRefusal({ status: 'frozen', provider_ready: true }), undefined);
    assert.equal(closeStateRefusal({ status: 'closed', provider_ready: 0 })?.code, 'ALREADY_CLOSED');
    assert.equal(closeStateRefusal({ status: 'processing', provider_ready: 0 })?.message, 'Card not ready for closure');
  });

  it('couponRefusal: a coupon found, active, unexpired and with redemptions left passes; else INVALID_COUPON with the reason', () => {
    const now = new Date('2026-03-01T12:00:00.000Z');
    const usable = { active: 1, expires_at: '2026-03-01T12:00:00.001Z', max_redemptions: 2, redemptions: 1 };
    assert.equal(couponRefusal(usable, now), undefined);
    assert.equal(couponRefusal({ ...usable, expires_at: null, max_redemptions: null }, now), undefined);
    const reason = (coupon: Parameters<typeof couponRefusal>[0]) => couponRefusal(coupon, now)?.params.reason;
    assert.equal(reason(undefined), 'coupon not found');
    assert.equal(reason({ ...usable, active: 0 }), 'coupon is inactive');
    assert.equal(reason({ ...usable, expires_at: '2026-03-01T12:00:00.000Z' }), 'coupon has expired');
    assert.equal(couponRefusal({ ...usable, redemptions: 2 }, now)?.message, 'Invalid coupon: coupon has no redemptions left');
    assert.equal(couponRefusal(usable, now, { refused: true })?.message, 'Invalid coupon: coupon has no redemptions left');
  });

  it('creationFeeRefusal: a fee within the wallet passes; else INSUFFICIENT_BALANCE with the fee required', () => {
    assert.equal(creationFeeRefusal({ fee: 500, available: 500 }), undefined);
    const refused = creationFeeRefusal({ fee: 500, available: 499 });
    assert.deepEqual([refused?.code, refused?.params], ['INSUFFICIENT_BALANCE', { required: 500 }]);
    assert.equal(refused?.message, 'Insufficient balance. Required: 5.00');
    assert.equal(creationFeeRefusal({ fee: 500, available: 900 }, { refused: true })?.code, 'INSUFFICIENT_BALANCE');
  });

  it('cooldownSecondsLeft: 0 when none began or it has passed, else the seconds left rounded up (never 0 while it runs)', () => {
    const now = new Date('2025-01-01T00:02:00.000Z');
    assert.equal(cooldownSecondsLeft(null, 120, now), 0);
    assert.equal(cooldownSecondsLeft('2025-01-01T00:00:00.000Z', 120, now), 0);
    assert.equal(cooldownSecondsLeft('2024-12-31T23:00:00.000Z', 120, now), 0);
    assert.equal(cooldownSecondsLeft('2025-01-01T00:00:00.001Z', 120, now), 1);
    assert.equal(cooldownSecondsLeft('2025-01-01T00:01:30.000Z', 120, now), 90);
  });

  it('the cooldown refusals carry the seconds left; the withdrawal one the configured minutes', () => {
    const now = new Date('2025-01-01T00:01:00.000Z');
    assert.equal(topupCooldownRefusal(null, defaultCoreSettings, now), undefined);
    assert.deepEqual(topupCooldownRefusal('2025-01-01T00:00:30.000Z', defaultCoreSettings, now)?.params, { seconds: 90 });
    const withdrawal = withdrawCooldownRefusal('2025-01-01T00:00:00.000Z', defaultCoreSettings, now);
    assert.deepEqual(withdrawal?.params, { seconds: 840, minutes: 15 });
    assert.equal(withdrawal?.message, 'Please wait 15 minutes between withdrawals');
    assert.deepEqual(withdrawCooldownRefusal('2025-01-01T00:00:59.000Z', { withdrawCooldownSeconds: 30 }, now)?.params, {
      seconds: 29,
      minutes: 1,
    });
  });

  it('amountBoundsRefusal: whole cents within the bounds pass; else the schema words the validation refusal', () => {
    const { schemas } = inputGuards(defaultCoreSettings);
    const bounds = { min: defaultCoreSettings.topupMin, max: defaultCoreSettings.topupMax, schema: schemas.topup };
    assert.equal(amountBoundsRefusal(500, bounds), undefined);
    const low = amountBoundsRefusal(499, bounds);
    assert.equal(low?.code, 'VALIDATION');
    assert.equal(low?.issues?.[0]?.message, 'Minimum top-up amount is 5');
    assert.equal(amountBoundsRefusal(1_000_001, bounds)?.issues?.[0]?.code, 'too_big');
    assert.equal(amountBoundsRefusal(1000.5, bounds)?.code, 'VALIDATION');
  });
});
