import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/schema.js';
import { lockedBalance } from '../operations/card-queries.js';
import { initialBalanceRefusal } from '../rules/rules.js';
import type { CoreDeps } from '../deps.js';
import { SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import { toBin, toPlan, type Bin, type CardCategory, type Plan } from '../operations/views.js';
import { AdminError } from './errors.js';

/** A BIN to add: what the BIN will be, but the id it is given; enabled unless said otherwise. */
export type NewBin = Omit<Bin, 'id' | 'enabled'> & Partial<Pick<Bin, 'enabled'>>;

export interface NewPlan {
  name: string;
  description: string;
  limit: Cents;
  creationFee: Cents;
}

export interface NewCoupon {
  code: string;
  kind: 'percent' | 'amount';
  /** Basis points for `percent`, cents for `amount`. */
  value: number;
  expiresAt?: string | null;
  maxRedemptions?: number | null;
}

const DEFAULT_BINS: NewBin[] = [
  { bin: '545454', network: 'master', threeDS: true, wallet: true, currency: 'USD', country: 'US', initialBalance: 0 },
  { bin: '424242', network: 'visa', threeDS: true, wallet: false, currency: 'USD', country: 'US', initialBalance: 0 },
  { bin: '414720', network: 'visa', threeDS: true, wallet: true, currency: 'USD', country: 'US', initialBalance: 500 },
  { bin: '531993', network: 'master', threeDS: false, wallet: false, currency: 'USD', country: 'GB', initialBalance: 0 },
];

const DEFAULT_PLANS: NewPlan[] = [
  { name: 'Basic', description: 'For occasional online purchases', limit: 100_000, creationFee: 500 },
  { name: 'Standard', description: 'For subscriptions and regular spending', limit: 500_000, creationFee: 1_500 },
  { name: 'Premium', description: 'For advertising and high-volume spending', limit: 2_500_000, creationFee: 4_900 },
];

const DEFAULT_FEES: { category: CardCategory; percentBps: number; fixed: Cents }[] = [
  { category: 'Online', percentBps: 250, fixed: 30 },
  { category: 'Wallet', percentBps: 300, fixed: 50 },
];

/** The card networks a BIN may name: the spec's. */
export const CARD_NETWORKS = ['visa', 'master'] as const;

/**
 * A new BIN as it will be stored, or a refusal saying what is wrong: currencies from ISO 4217 as Node's
 * ICU keeps them (`Intl.supportedValuesOf`), countries from ISO 3166-1 as i18n-iso-countries keeps them
 * (loaded only here: the service never needs it).
 */
async function checkedBin(bin: NewBin): Promise<NewBin> {
  if (!/^\d{6}$/.test(bin.bin)) throw new AdminError('A BIN is 6 digits');
  if (!Number.isSafeInteger(bin.initialBalance) || bin.initialBalance < 0) throw new AdminError('The initial balance cannot be negative');
  const network = bin.network.toLowerCase();
  if (!(CARD_NETWORKS as readonly string[]).includes(network)) {
    const meant = network.startsWith('master') ? ' (did you mean master?)' : '';
    throw new AdminError(`The network must be one of ${CARD_NETWORKS.join(', ')}${meant}`);
  }
  const currency = bin.currency.toUpperCase();
  if (!Intl.supportedValuesOf('currency').includes(currency)) throw new AdminError(`${bin.currency} is not an ISO 4217 currency code`);
  const country = bin.country.toUpperCase();
  const { default: countries } = await import('i18n-iso-countries');
  if (!/^[A-Z]{2}$/.test(country) || !countries.isValid(country)) {
    throw new AdminError(`${bin.country} is not an ISO 3166-1 alpha-2 country code`);
  }
  return { ...bin, network, currency, country };
}

/** The catalogue an operator keeps: BINs, plans, platform fees, coupons, and the defaults a fresh database starts with. */
export function createCatalogue({ db, clock }: Pick<CoreDeps, 'db' | 'clock'>) {
  const now = () => clock.now().toISOString();

  async function insertBin(ex: Executor, bin: NewBin): Promise<string> {
    const id = randomUUID();
    await ex
      .insertInto('bins')
      .values({
        id,
        bin: bin.bin,
        network: bin.network,
        three_ds: bin.threeDS ? 1 : 0,
        wallet: bin.wallet ? 1 : 0,
        currency: bin.currency,
        country: bin.country,
        initial_balance: bin.initialBalance,
        enabled: bin.enabled === false ? 0 : 1,
        created_at: now(),
      })
      .execute();
    return id;
  }

  async function insertPlan(ex: Executor, plan: NewPlan) {
    return ex
      .insertInto('plans')
      .values({
        name: plan.name,
        description: plan.description,
        limit_amount: plan.limit,
        creation_fee: plan.creationFee,
        active: 1,
        created_at: now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  const catalogue = {
    /**
     * A fresh database gets the default BINs, plans and fees; an existing one is left as it is. One
     * transaction holding the revenue account's row: processes starting together seed once.
     */
    async seedDefaults(): Promise<void> {
      await db.transaction().execute(async (trx) => {
        for (const code of Object.values(SYSTEM_ACCOUNTS)) await systemAccountId(trx, code);
        await lockedBalance(trx, await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue));
        const anyBin = await trx.selectFrom('bins').select('id').limit(1).executeTakeFirst();
        if (!anyBin) for (const bin of DEFAULT_BINS) await insertBin(trx, bin);
        const anyPlan = await trx.selectFrom('plans').select('id').limit(1).executeTakeFirst();
        if (!anyPlan) for (const plan of DEFAULT_PLANS) await insertPlan(trx, plan);
        for (const fee of DEFAULT_FEES) {
          await trx
            .insertInto('platform_fees')
            .values({ category: fee.category, percent_bps: fee.percentBps, fixed_amount: fee.fixed, updated_at: now() })
            .onConflict((oc) => oc.column('category').doNothing())
            .execute();
        }
      });
    },

    async listBins(): Promise<Bin[]> {
      return (await db.selectFrom('bins').selectAll().orderBy('created_at').orderBy('bin').execute()).map(toBin);
    },

    /** Adds a BIN: 6 digits not listed yet, a known network, an ISO 4217 currency and an ISO 3166 country (cardholders see them). */
    async addBin(input: NewBin): Promise<Bin> {
      const bin = await checkedBin(input);
      const id = await db.transaction().execute(async (trx) => {
        const listed = await trx.selectFrom('bins').select('id').where('bin', '=', bin.bin).executeTakeFirst();
        if (listed) throw new AdminError(`BIN ${bin.bin} is listed already (${listed.id}): enable or disable that one`);
        return insertBin(trx, bin);
      });
      return toBin(await db.selectFrom('bins').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    },

    /** The active plans no card of the BIN can be created on: their limit is below its initial balance (`initialBalanceRefusal`). */
    async plansBelowInitialBalance(bin: Bin): Promise<Plan[]> {
      return (await catalogue.listPlans()).filter((plan) => plan.active && initialBalanceRefusal(bin, plan) !== undefined);
    },

    /** The enabled BINs no card of the plan can be created from: their initial balance is above its limit. */
    async binsAboveLimit(plan: Plan): Promise<Bin[]> {
      return (await catalogue.listBins()).filter((bin) => bin.enabled && initialBalanceRefusal(bin, plan) !== undefined);
    },

    async setBinEnabled(id: string, enabled: boolean): Promise<void> {
      const changed = await db
        .updateTable('bins')
        .set({ enabled: enabled ? 1 : 0 })
        .where('id', '=', id)
        .executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No BIN with id ${id}`);
    },

    async listPlans(): Promise<Plan[]> {
      return (await db.selectFrom('plans').selectAll().orderBy('id').execute()).map(toPlan);
    },

    async addPlan(plan: NewPlan): Promise<Plan> {
      if (!plan.name.trim()) throw new AdminError('A plan needs a name');
      if (!Number.isSafeInteger(plan.limit) || plan.limit <= 0) throw new AdminError('A plan limit must be positive');
      if (!Number.isSafeInteger(plan.creationFee) || plan.creationFee < 0) throw new AdminError('A creation fee cannot be negative');
      return toPlan(await insertPlan(db, plan));
    },

    async deactivatePlan(id: number): Promise<void> {
      const changed = await db.updateTable('plans').set({ active: 0 }).where('id', '=', id).executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No plan with id ${id}`);
    },

    async listFees() {
      const rows = await db.selectFrom('platform_fees').selectAll().orderBy('category').execute();
      return rows.map((r) => ({ category: r.category as CardCategory, percentBps: r.percent_bps, fixed: Number(r.fixed_amount) }));
    },

    async setFee(category: CardCategory, percentBps: number, fixed: Cents): Promise<void> {
      if (!Number.isInteger(percentBps) || percentBps < 0 || percentBps > 10_000)
        throw new AdminError('The percent must be between 0 and 100');
      if (!Number.isSafeInteger(fixed) || fixed < 0) throw new AdminError('The fixed fee cannot be negative');
      await db
        .insertInto('platform_fees')
        .values({ category, percent_bps: percentBps, fixed_amount: fixed, updated_at: now() })
        .onConflict((oc) => oc.column('category').doUpdateSet({ percent_bps: percentBps, fixed_amount: fixed, updated_at: now() }))
        .execute();
    },

    async createCoupon(coupon: NewCoupon) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(coupon.code)) throw new AdminError('A coupon code is 1-64 letters, digits, - or _');
      if (!Number.isSafeInteger(coupon.value) || coupon.value <= 0) throw new AdminError('A coupon value must be positive');
      if (coupon.kind === 'percent' && coupon.value > 10_000) throw new AdminError('A percent coupon is at most 100%');
      const exists = await db.selectFrom('coupons').select('id').where('id', '=', coupon.code).executeTakeFirst();
      if (exists) throw new AdminError(`Coupon ${coupon.code} already exists`);
      await db
        .insertInto('coupons')
        .values({
          id: coupon.code,
          kind: coupon.kind,
          value: coupon.value,
          expires_at: coupon.expiresAt ?? null,
          max_redemptions: coupon.maxRedemptions ?? null,
          redemptions: 0,
          active: 1,
          created_at: now(),
        })
        .execute();
    },

    async listCoupons() {
      const rows = await db.selectFrom('coupons').selectAll().orderBy('created_at').execute();
      return rows.map((r) => ({
        code: r.id,
        kind: r.kind,
        value: Number(r.value),
        expiresAt: r.expires_at,
        maxRedemptions: r.max_redemptions,
        redemptions: r.redemptions,
        active: Boolean(r.active),
      }));
    },

    async setCouponActive(code: string, active: boolean): Promise<void> {
      const changed = await db
        .updateTable('coupons')
        .set({ active: active ? 1 : 0 })
        .where('id', '=', code)
        .executeTakeFirst();
      if (changed.numUpdatedRows === 0n) throw new AdminError(`No coupon ${code}`);
    },
  };

  return catalogue;
}
