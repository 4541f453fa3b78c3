import { compiledOnce } from '../../db/compiled-query.js';
import type { Executor } from '../../db/schema.js';
import { percentOf, type Cents } from './money.js';
import type { CardCategory } from '../operations/views.js';

export interface PlatformFee {
  category: CardCategory;
  percentBps: number;
  fixed: Cents;
}

/** The platform fee on a top-up of `amount` to a card of `category`: percent (half-up) plus the fixed part. */
const feeOf = compiledOnce(1, (ex, category: CardCategory) =>
  ex.selectFrom('platform_fees').select(['percent_bps', 'fixed_amount']).where('category', '=', category),
);

export async function platformFeeFor(ex: Executor, category: CardCategory, amount: Cents): Promise<Cents> {
  const [fee] = (await feeOf.execute(ex, category)).rows;
  if (!fee) return 0;
  return percentOf(amount, fee.percent_bps) + Number(fee.fixed_amount);
}
