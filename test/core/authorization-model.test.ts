import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startAtSignal } from '../helpers/processes.js';
import { createTestCore } from '../helpers/core.js';
import { AuthorizationError } from '../../src/core/authorization/types.js';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { dialects, freshPostgresDatabase, useCore } from './dialects.js';

// The authorization engine against a simple model (issue 33, section 1): thousands of random operations
// (decisions with random amounts, categories and merchants, clearings for the amount, less, more and too
// much, voids, refunds, freezes, control and auto top-up changes, top-ups, time passing and the expiry
// sweep); the model predicts every decision's code and every balance, and the ledger stays exact.

const OPS = { sqlite: 2_000, postgres: 300 } as const;
const DAY = 86_400_000;
const TOPUP_MIN = 500;
const TOPUP_MAX = 1_000_000;
const PLAN_LIMIT = 300_000;
const MCCS = ['5411', '5999', '7995', '5816'] as const;

/** A small seeded generator (mulberry32): a failing run is replayed by its seed. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
  return { next, int, pick };
}

interface ModelAuth {
  ptid: string;
  card: ModelCard;
  amount: number;
  cleared: number | null;
  status: 'pending' | 'cleared' | 'voided' | 'expired' | 'declined';
  code: string | null;
  at: number;
}

interface ModelCard {
  id: string;
  balance: number;
  deposit: number;
  frozen: boolean;
  type: 'multi_use' | 'merchant_locked';
  lockedMerchant: string | null;
  perPurchase: number | null;
  daily: number | null;
  monthly: number | null;
  blockGambling: boolean;
  auto: { enabled: boolean; min: number; amount: number; last: number | null };
}

const feeOf = (amount: number) => Math.floor((amount * 250 + 5000) / 10000) + 30; // the Online cards' seeded fee

async function runModel(t: TestCore, ops: number, seed: number): Promise<void> {
  const random = generator(seed);
  const customer = await newCustomer(t, 2_000_000, 'Model');
  const model = { wallet: 0, cards: [] as ModelCard[], auths: [] as ModelAuth[] };
  for (const type of ['multi_use', 'multi_use', 'merchant_locked'] as const) {
    const card = await newCard(t, customer, `Card ${model.cards.length + 1}`);
    await t.database.db.updateTable('cards').set({ type, limit_amount: PLAN_LIMIT }).where('id', '=', card.id).execute();
    model.cards.push({
      id: card.id,
      balance: 0,
      deposit: 0,
      frozen: false,
      type,
      lockedMerchant: null,
      perPurchase: null,
      daily: null,
      monthly: null,
      blockGambling: false,
      auto: { enabled: false, min: 0, amount: 0, last: null },
    });
  }
  model.wallet = (await t.core.walletBalance(customer.caller)).balance;
  const now = () => t.clock.now().getTime();
  let sequence = 0;

  /** Auto top-up as the model sees it: done, or why not. */
  function autoTopUp(card: ModelCard, wanted: number): 'done' | 'inactive' | 'rate_limited' | 'plan_limit' | 'wallet_short' {
    if (card.frozen) return 'inactive'; // only an active card is topped up; nothing is attempted or counted
    const amount = Math.min(wanted, TOPUP_MAX);
    if (card.auto.last !== null && now() - card.auto.last < 60_000) return 'rate_limited';
    card.auto.last = now(); // the attempt counts, failed or not
    if (card.deposit + amount > PLAN_LIMIT) return 'plan_limit';
    if (amount + feeOf(amount) > model.wallet) return 'wallet_short';
    model.wallet -= amount + feeOf(amount);
    card.balance += amount;
    card.deposit += amount;
    return 'done';
  }

  function spent(card: ModelCard): { today: number; month: number } {
    const at = new Date(now());
    const dayStart = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    const monthStart = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
    const counted = model.auths.filter((a) => a.card === card && (a.status === 'pending' || a.status === 'cleared') && a.at >= monthStart);
    const sum = (list: ModelAuth[]) => list.reduce((s, a) => s + (a.cleared ?? a.amount), 0);
    return { today: sum(counted.filter((a) => a.at >= dayStart)), month: sum(counted) };
  }

  function predict(card: ModelCard, amount: number, merchant: string, mcc: string): string | null {
    if (card.frozen) return 'card_frozen';
    if (card.type === 'merchant_locked' && card.lockedMerchant !== null && card.lockedMerchant !== merchant) return 'merchant_locked';
    if (card.perPurchase !== null && amount > card.perPurchase) return 'per_purchase_limit';
    const { today, month } = spent(card);
    if (card.daily !== null && today + amount > card.daily) return 'daily_limit';
    if (card.monthly !== null && month + amount > card.monthly) return 'monthly_limit';
    if (card.blockGambling && mcc === '7995') return 'blocked_category';
    if (amount > card.balance && card.auto.enabled) autoTopUp(card, Math.max(card.auto.amount, amount - card.balance, TOPUP_MIN));
    return amount > card.balance ? 'insufficient_funds' : null;
  }

  const pendingAuths = () => model.auths.filter((a) => a.status === 'pending');
  const context = (op: number, what: string) => `seed ${seed}, op ${op}: ${what}`;

  for (let op = 0; op < ops; op++) {
    const card = random.pick(model.cards);
    const roll = random.next();
    if (roll < 0.4) {
      const replay = model.auths.length > 0 && random.next() < 0.05 ? random.pick(model.auths) : null;
      if (replay) {
        const again = await t.core.authorize({
          cardId: replay.card.id,
          amount: replay.amount,
          currency: 'USD',
          merchant: { name: 'Anyone', mcc: '5999', country: 'US' },
          kind: 'purchase',
          providerTransactionId: replay.ptid,
        });
        assert.equal(again.replayed, true, context(op, 'replay'));
        assert.equal(again.declineCode, replay.code, context(op, 'replay'));
        continue;
      }
      const amount = random.int(1, 4_000);
      const merchant = random.pick(['Alpha', 'Beta']);
      const mcc = random.pick(MCCS);
      const ptid = `model-${seed}-${sequence++}`;
      const expected = predict(card, amount, merchant, mcc);
      const decision = await t.core.authorize({
        cardId: card.id,
        amount,
        currency: 'USD',
        merchant: { name: merchant, mcc, country: 'US' },
        kind: 'purchase',
        providerTransactionId: ptid,
      });
      assert.equal(decision.declineCode, expected, context(op, `authorize ${amount} at ${merchant} ${mcc}`));
      if (expected === null) {
        card.balance -= amount;
        if (card.type === 'merchant_locked') card.lockedMerchant ??= merchant;
      }
      model.auths.push({ ptid, card, amount, cleared: null, status: expected ? 'declined' : 'pending', code: expected, at: now() });
      assert.equal(decision.cardBalance, card.balance, context(op, 'balance after authorize'));
    } else if (roll < 0.6) {
      const auth =
        random.next() < 0.9 && pendingAuths().length > 0
          ? random.pick(pendingAuths())
          : random.pick(model.auths.length ? model.auths : [null]);
      if (!auth) continue;
      const amount = random.pick([
        auth.amount,
        auth.amount,
        Math.max(1, auth.amount - random.int(0, auth.amount)),
        auth.amount + Math.floor(auth.amount / 5),
        auth.amount + Math.floor(auth.amount / 5) + 1,
      ]);
      const clearing = t.core.clearAuthorization({ providerTransactionId: auth.ptid, amount });
      const late = auth.status === 'voided' || auth.status === 'expired';
      if (late && (amount - auth.amount) * 100 <= auth.amount * 20 && amount <= auth.card.balance) {
        // Cleared after its hold was released: settled from the card's balance, which covers it.
        const result = await clearing;
        const c = auth.card;
        c.balance -= amount;
        auth.status = 'cleared';
        auth.cleared = amount;
        if (c.auto.enabled && c.auto.amount > 0 && c.balance < c.auto.min) autoTopUp(c, c.auto.amount);
        assert.deepEqual([result.status, result.cardBalance], ['cleared', c.balance], context(op, 'late clearing'));
        continue;
      }
      if (auth.status !== 'pending' && auth.status !== 'cleared') {
        await assert.rejects(
          clearing,
          (e) => e instanceof AuthorizationError && e.code === 'not_pending',
          context(op, 'clear not pending'),
        );
        continue;
      }
      const result = await clearing;
      if (auth.status === 'cleared') {
        assert.equal(result.replayed, true, context(op, 'clear replay'));
        continue;
      }
      const c = auth.card;
      const extra = amount - auth.amount;
      let reason: string | null = null;
      if (extra * 100 > auth.amount * 20) reason = 'over_tolerance';
      else if (extra > 0) {
        if (extra > c.balance && c.auto.enabled) autoTopUp(c, Math.max(c.auto.amount, extra - c.balance, TOPUP_MIN));
        if (extra > c.balance) reason = 'insufficient_funds';
      }
      assert.equal(result.reason, reason, context(op, `clear ${amount} of ${auth.amount}`));
      if (reason === null) {
        c.balance -= extra;
        auth.status = 'cleared';
        auth.cleared = amount;
        if (c.auto.enabled && c.auto.amount > 0 && c.balance < c.auto.min) autoTopUp(c, c.auto.amount);
      }
      assert.equal(result.cardBalance, c.balance, context(op, 'balance after clearing'));
    } else if (roll < 0.68) {
      const settled = model.auths.filter((a) => a.status !== 'pending' && a.status !== 'declined');
      if (settled.length > 0 && random.next() < 0.1) {
        // A void of a hold already released answers the same, moving nothing; of a clearing, it is refused.
        const again = random.pick(settled);
        const voiding = t.core.voidAuthorization(again.ptid);
        if (again.status === 'cleared') await assert.rejects(voiding, { code: 'not_pending' }, context(op, 'void after clearing'));
        else assert.deepEqual([(await voiding).replayed, (await voiding).status], [true, again.status], context(op, 'void again'));
        continue;
      }
      const auth = pendingAuths().length > 0 ? random.pick(pendingAuths()) : null;
      if (!auth) continue;
      const released = await t.core.voidAuthorization(auth.ptid);
      auth.status = 'voided';
      auth.card.balance += auth.amount;
      assert.equal(released.cardBalance, auth.card.balance, context(op, 'void'));
    } else if (roll < 0.73) {
      const amount = random.int(1, 2_000);
      const refund = await t.admin.simulateRefund(card.id, amount);
      card.balance += amount; // never declined, frozen or not
      assert.equal(refund.cardBalance, card.balance, context(op, 'refund'));
    } else if (roll < 0.77) {
      if (card.frozen) await t.core.unfreeze(customer.caller, card.id);
      else await t.core.freeze(customer.caller, card.id);
      card.frozen = !card.frozen;
    } else if (roll < 0.84) {
      const limit = () => (random.next() < 0.5 ? null : random.int(500, 20_000));
      card.perPurchase = limit();
      card.daily = limit();
      card.monthly = limit();
      card.blockGambling = random.next() < 0.3;
      await t.database.db
        .updateTable('cards')
        .set({
          per_purchase_limit: card.perPurchase,
          daily_limit: card.daily,
          monthly_limit: card.monthly,
          blocked_categories: card.blockGambling ? '["gambling"]' : '[]',
        })
        .where('id', '=', card.id)
        .execute();
    } else if (roll < 0.89) {
      card.auto = { ...card.auto, enabled: random.next() < 0.6, min: random.int(0, 3_000), amount: random.int(500, 5_000) };
      await t.database.db
        .updateTable('cards')
        .set({ auto_topup_enabled: card.auto.enabled ? 1 : 0, auto_topup_min_balance: card.auto.min, auto_topup_amount: card.auto.amount })
        .where('id', '=', card.id)
        .execute();
    } else if (roll < 0.93) {
      t.clock.advance(121_000);
      const amount = random.int(500, 20_000);
      const topup = t.core.topup(customer.caller, card.id, { amount });
      if (card.deposit + amount > PLAN_LIMIT || amount + feeOf(amount) > model.wallet) {
        await assert.rejects(topup, (e) => isCardServiceError(e), context(op, 'top-up refused'));
        continue;
      }
      await topup;
      model.wallet -= amount + feeOf(amount);
      card.balance += amount;
      card.deposit += amount;
    } else {
      t.clock.advance(random.pick([5_000, 61_000, 3_600_000, DAY, 3 * DAY]));
      if (random.next() < 0.5) {
        const released = await t.core.expireAuthorizations();
        const due = pendingAuths().filter((a) => a.at + 7 * DAY <= now());
        assert.equal(released.length, due.length, context(op, 'expiry'));
        for (const auth of due) {
          auth.status = 'expired';
          auth.card.balance += auth.amount;
        }
      }
    }
  }

  // The run reached the rules it is about, not only approvals.
  const codes = new Set(model.auths.map((a) => a.code));
  if (ops >= 1_000) assert.ok(codes.size >= 7, `seed ${seed}: codes seen ${[...codes].join(', ')}`);
  for (const card of model.cards)
    assert.equal((await t.core.getCard(customer.caller, card.id)).balance, card.balance, `seed ${seed}: final card balance`);
  assert.equal((await t.core.walletBalance(customer.caller)).balance, model.wallet, `seed ${seed}: final wallet`);
  const ledger = await t.admin.checkLedger();
  assert.deepEqual([ledger.differences, ledger.unbalancedJournals, ledger.total], [[], [], 0], `seed ${seed}: ledger`);
}

for (const dialect of dialects()) {
  describe(`authorization engine against its model (${dialect})`, () => {
    test('every decision code and balance is the model’s, the ledger exact', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const seed = Number(process.env.MODEL_SEED ?? Date.now() % 1_000_000);
      await runModel(t, OPS[dialect], seed);
    });
  });
}

const DECIDER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'authorization-process.ts');
const PROCESSES = 3;
const SHARED_IDS = 40;

for (const dialect of dialects()) {
  test(`several processes asking the same authorizations at once: each decided and held once, the ledger exact (${dialect})`, async (ctx) => {
    let url: string;
    if (dialect === 'sqlite') {
      const dir = mkdtempSync(path.join(tmpdir(), 'cards-authorizations-'));
      ctx.after(() => rmSync(dir, { recursive: true, force: true }));
      url = path.join(dir, 'cards.db');
    } else {
      const database = await freshPostgresDatabase(process.env.TEST_DATABASE_URL!);
      ctx.after(() => database.drop());
      url = database.url;
    }
    const setup = await createTestCore({ url });
    const alice = await newCustomer(setup, 100_000);
    const card = await newCard(setup, alice);
    // Enough for about two thirds of the purchases: the rest are declined, whichever process asks first.
    await setup.core.topup(alice.caller, card.id, { amount: 3_000 });
    await setup.close();

    const deciders = Array.from({ length: PROCESSES }, (_, p) =>
      startAtSignal<{ decided: number }>('decider', DECIDER, [url, card.id, String(SHARED_IDS), String(p * 7)]),
    );
    await Promise.all(deciders.map((d) => d.ready));
    for (const d of deciders) d.go();
    const decided = (await Promise.all(deciders.map((d) => d.done))).reduce((sum, d) => sum + d.decided, 0);
    assert.equal(decided, SHARED_IDS, 'each provider transaction decided once across the processes');

    const after = await createTestCore({ url });
    ctx.after(() => after.close());
    const rows = await after.database.db.selectFrom('card_authorizations').select(['amount', 'status', 'cleared_amount']).execute();
    assert.equal(rows.length, SHARED_IDS);
    const approved = rows.filter((r) => r.status !== 'declined');
    const holds = await after.database.db.selectFrom('journals').select('id').where('kind', '=', 'authorization_hold').execute();
    assert.equal(holds.length, approved.length, 'one hold per approval');
    const spent = approved.reduce((sum, r) => sum + Number(r.amount), 0);
    assert.equal((await after.core.getCard(alice.caller, card.id)).balance, 3_000 - spent);
    const ledger = await after.admin.checkLedger();
    assert.deepEqual([ledger.differences, ledger.unbalancedJournals, ledger.total], [[], [], 0]);
  });
}
