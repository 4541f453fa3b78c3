import type { Executor } from '../../db/schema.js';
import { type Cents, percentOf } from '../ledger/money.js';
import { CardServiceError } from '../rules/errors.js';
import { couponRefusal, initialBalanceRefusal } from '../rules/rules.js';
import type { CreateCardInput } from '../rules/schemas.js';

// What a card's creation checks before it holds the fee: the BIN and plan it names, and its coupon.

/** A coupon that can be redeemed now (read only); refuses an unusable one with its reason (`couponRefusal`). */
export async function usableCoupon(ex: Executor, couponId: string, now: Date) {
  const coupon = await ex.selectFrom('coupons').selectAll().where('id', '=', couponId).executeTakeFirst();
  const refused = couponRefusal(coupon, now);
  if (refused) throw refused;
  return coupon!;
}

export function discounted(fee: Cents, coupon: { kind: string; value: number } | undefined): Cents {
  if (!coupon) return fee;
  const discount = coupon.kind === 'percent' ? percentOf(fee, Number(coupon.value)) : Number(coupon.value);
  return Math.max(0, fee - discount);
}

/** The plan's creation fee less the coupon, redeeming the coupon; refuses an unusable one. */
export async function creationFee(trx: Executor, fee: Cents, couponId: string | undefined, now: Date): Promise<Cents> {
  if (couponId === undefined) return fee;
  const coupon = await usableCoupon(trx, couponId, now);
  // The conditional update decides the last redemption, whatever ran beside this.
  const redeemed = await trx
    .updateTable('coupons')
    .set((eb) => ({ redemptions: eb('redemptions', '+', 1) }))
    .where('id', '=', couponId)
    .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('redemptions', '<', eb.ref('max_redemptions'))]))
    .executeTakeFirst();
  // The update decided; the named check words the refusal.
  if (redeemed.numUpdatedRows === 0n) throw couponRefusal(coupon, now, { refused: true })!;
  return discounted(fee, coupon);
}

/** The enabled BIN and active plan a creation names, or the spec's refusals, and a pair that can issue a card. */
export async function binAndPlan(ex: Executor, input: Pick<CreateCardInput, 'bin_id' | 'planId'>) {
  const bin = await ex.selectFrom('bins').selectAll().where('id', '=', input.bin_id).where('enabled', '=', 1).executeTakeFirst();
  if (!bin) throw new CardServiceError('INVALID_BIN');
  const plan = await ex.selectFrom('plans').selectAll().where('id', '=', input.planId).where('active', '=', 1).executeTakeFirst();
  if (!plan) throw new CardServiceError('INVALID_PLAN');
  const overLimit = initialBalanceRefusal({ initialBalance: Number(bin.initial_balance) }, { limit: Number(plan.limit_amount) });
  if (overLimit) throw overLimit;
  return { bin, plan };
}
