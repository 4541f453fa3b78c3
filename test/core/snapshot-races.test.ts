import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import type { TestCore } from '../helpers/core.js';
import { catalogue, newCard, newCustomer } from '../helpers/core.js';
import { eventually } from '../helpers/wait.js';
import { useCore, withoutPostgres } from './dialects.js';

// A Postgres statement reads the rows it updates from its snapshot first: a condition on such a row skips it
// when another transaction changed it while the statement waited for a lock, even though the statement then
// holds the row's newest version. The money statements decide on the rows they locked instead.

/** A second connection holding `change` open in a transaction until `commit`, to make the statement wait. */
async function heldChange(t: TestCore, change: string, values: unknown[]) {
  if (t.database.target.kind !== 'postgres') throw new Error('a Postgres test');
  const client = new pg.Client({ connectionString: t.database.target.url });
  await client.connect();
  await client.query('begin');
  const { rowCount } = await client.query(change, values);
  assert.equal(rowCount, 1, change);
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  return {
    /** Until another backend waits for a lock this connection holds. */
    async waitedOn() {
      await eventually('the statement waits for the held row', async () => {
        const { rows } = await client.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
          [pid],
        );
        return rows[0]!.n > 0;
      });
    },
    async commit() {
      await client.query('commit');
      await client.end();
    },
  };
}

describe('money statements decide on the rows they locked (Postgres)', { skip: withoutPostgres }, () => {
  test("a coupon's use is counted when its count was lowered while the creation waited for it", async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 10_000);
    const { bin, plan } = await catalogue(t);
    await t.admin.createCoupon({ code: 'ONE', kind: 'amount', value: 100, maxRedemptions: 1 });
    await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'First', coupon_id: 'ONE' });
    // Another creation's use given back (its release), committed while this creation waits on the coupon's lock.
    const release = await heldChange(t, 'update coupons set redemptions = redemptions - 1 where id = $1', ['ONE']);
    const creating = t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Second', coupon_id: 'ONE' });
    await release.waitedOn();
    await release.commit();
    const card = await creating;
    assert.equal(card.status, 'active');
    const [coupon] = await t.admin.listCoupons();
    assert.equal(coupon?.redemptions, 1, 'the use is counted: the coupon is full again');
    await assert.rejects(t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Third', coupon_id: 'ONE' }), {
      code: 'INVALID_COUPON',
    });
  });

  test('a withdrawal covered by money that reached the card while it waited for the card is paid', async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 10_000);
    const card = await newCard(t, alice);
    const before = (await t.core.getCard(alice.caller, card.id)).balance;
    const { account_id } = await t.database.db.selectFrom('cards').select('account_id').where('id', '=', card.id).executeTakeFirstOrThrow();
    // A credit to the card (as a refund's), committed while the withdrawal waits on the card's account.
    const credit = await heldChange(t, 'update accounts set balance = balance + 500 where id = $1', [account_id]);
    const withdrawing = t.core.withdraw(alice.caller, card.id, { amount: before + 200 });
    await credit.waitedOn();
    await credit.commit();
    const result = await withdrawing;
    assert.equal(result.amountWithdrawn, before + 200);
    assert.equal((await t.core.getCard(alice.caller, card.id)).balance, 300);
  });
});
