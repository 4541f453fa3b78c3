import type { CardStatus } from '../operations/views.js';
import type { FundingDeps } from '../funding/funding.js';
import { fundingTables } from '../funding/funding-tables.js';
import { SYSTEM_ACCOUNTS, systemAccountId } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';

export interface ServiceStats {
  /** The UTC day `feesToday` counts, `YYYY-MM-DD`. */
  day: string;
  users: number;
  cards: Record<CardStatus, number>;
  /** Money held in every wallet, and on every card. */
  walletTotal: Cents;
  cardTotal: Cents;
  /** Creation and platform fees credited to the revenue account during `day`. */
  feesToday: Cents;
  pendingDeposits: { count: number; amount: Cents };
}

const DAY_MS = 86_400_000;

/** The figures an operator watches: users, cards by state, money held, today's fees, requests waiting. */
export function createStatsService({ db, clock }: FundingDeps) {
  const tables = fundingTables(db);
  return {
    async read(): Promise<ServiceStats> {
      const dayStart = Math.floor(clock.now().getTime() / DAY_MS) * DAY_MS;
      const from = new Date(dayStart).toISOString();
      const until = new Date(dayStart + DAY_MS).toISOString();
      const users = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      const cardRows = await db
        .selectFrom('cards')
        .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
        .groupBy('status')
        .execute();
      const cards: Record<CardStatus, number> = { processing: 0, active: 0, frozen: 0, closed: 0 };
      for (const row of cardRows) cards[row.status] = Number(row.count);
      const held = await db
        .selectFrom('accounts')
        .select((eb) => ['kind', eb.fn.coalesce(eb.fn.sum<number>('balance'), eb.lit(0)).as('total')])
        .where('kind', 'in', ['wallet', 'card'])
        .groupBy('kind')
        .execute();
      const heldBy = (kind: string) => Number(held.find((row) => row.kind === kind)?.total ?? 0);
      const revenue = await systemAccountId(db, SYSTEM_ACCOUNTS.revenue);
      const fees = await db
        .selectFrom('entries')
        .innerJoin('journals', 'journals.id', 'entries.journal_id')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('entries.amount'), eb.lit(0)).as('total'))
        .where('entries.account_id', '=', revenue)
        .where('journals.created_at', '>=', from)
        .where('journals.created_at', '<', until)
        .executeTakeFirstOrThrow();
      const pending = await tables
        .selectFrom('deposit_requests')
        .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('amount'), eb.lit(0)).as('amount')])
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      return {
        day: from.slice(0, 10),
        users: Number(users.count),
        cards,
        walletTotal: heldBy('wallet'),
        cardTotal: heldBy('card'),
        feesToday: Number(fees.total),
        pendingDeposits: { count: Number(pending.count), amount: Number(pending.amount) },
      };
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
