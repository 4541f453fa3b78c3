import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isCardServiceError } from '../../src/core/rules/errors.js';
import { percentOf } from '../../src/core/ledger/money.js';
import type { Bin, Plan } from '../../src/core/operations/views.js';
import { newCustomer, type Customer } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

/** mulberry32: a small seeded PRNG, so a failure replays exactly. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

interface ModelCard {
  id: string;
  owner: number;
  balance: number;
  deposit: number;
  limit: number;
  status: 'active' | 'frozen' | 'closed';
  category: 'Wallet' | 'Online';
  lastTopup: number | null;
  lastWithdraw: number | null;
}

const FEES = { Online: { bps: 250, fixed: 30 }, Wallet: { bps: 300, fixed: 50 } } as const;
const TOPUP_COOLDOWN_MS = 120_000;
const WITHDRAW_COOLDOWN_MS = 900_000;

/** The outcome the spec's rules predict: a result code or 'ok'. */
type Outcome = string;

const SEED = Number(process.env.RANDOM_SEED ?? 20261122);

for (const dialect of dialects()) {
  describe(`randomized operations (${dialect})`, () => {
    test('thousands of random operations match the rules, keep the ledger balanced and conserve money to the cent', async (ctx) => {
      const operations = dialect === 'sqlite' ? 3_000 : 1_200;
      const random = prng(SEED);
      const t = await useCore(ctx, dialect);
      const bins: Bin[] = await t.core.listBins();
      const plans: Plan[] = await t.core.listPlans();
      const users: Customer[] = [];
      const wallets: number[] = [];
      const cards: ModelCard[] = [];
      const totals = { deposits: 0, initial: 0, fees: 0, purchases: 0, refunds: 0 };
      const outcomes = new Map<string, number>();

      for (let i = 0; i < 12; i++) {
        const deposit = random.int(0, 50_000);
        users.push(await newCustomer(t, deposit, `User ${i}`));
        wallets.push(deposit);
        totals.deposits += deposit;
      }

      const at = () => t.clock.now().getTime();
      async function attempt(name: string, expected: Outcome, run: () => Promise<unknown>): Promise<unknown> {
        let actual: Outcome = 'ok';
        let value: unknown;
        try {
          value = await run();
        } catch (error) {
          if (!isCardServiceError(error)) throw error;
          actual = error.code;
        }
        assert.equal(actual, expected, `${name}: expected ${expected}, got ${actual}`);
        outcomes.set(`${name}:${actual}`, (outcomes.get(`${name}:${actual}`) ?? 0) + 1);
        return value;
      }

      for (let step = 0; step < operations; step++) {
        if (random.chance(0.3)) t.clock.advance(random.int(0, 300) * 1_000);
        const u = random.int(0, users.length - 1);
        const caller = users[u]!.caller;
        const owned = cards.filter((c) => c.owner === u);
        // Now and then aim at someone else's card: it must read as not found.
        const stranger = random.chance(0.05) ? cards.find((c) => c.owner !== u) : undefined;
        const card = stranger ?? (owned.length > 0 ? random.pick(owned) : undefined);
        const roll = random.int(0, 99);

        if (roll < 6) {
          const amount = random.int(1, 30_000);
          await t.admin.deposit(users[u]!.userId, amount);
          wallets[u]! += amount;
          totals.deposits += amount;
        } else if (roll < 16 || !card) {
          if (cards.length > 120) continue;
          const bin = random.pick(bins);
          const plan = random.pick(plans);
          const fee = plan.creationFee;
          const expected = wallets[u]! < fee ? 'INSUFFICIENT_BALANCE' : 'ok';
          const created = (await attempt('create', expected, () =>
            t.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `Card ${step}` }),
          )) as { id: string } | undefined;
          if (created) {
            wallets[u]! -= fee;
            totals.fees += fee;
            totals.initial += bin.initialBalance;
            cards.push({
              id: created.id,
              owner: u,
              balance: bin.initialBalance,
              deposit: bin.initialBalance,
              limit: plan.limit,
              status: 'active',
              category: bin.wallet ? 'Wallet' : 'Online',
              lastTopup: null,
              lastWithdraw: null,
            });
          }
        } else if (roll < 46) {
          const amount = random.chance(0.5) ? random.int(500, 5_000) : random.int(500, 200_000);
          const fee = percentOf(amount, FEES[card.category].bps) + FEES[card.category].fixed;
          let expected: Outcome = 'ok';
          if (card.owner !== u) expected = 'CARD_NOT_FOUND';
          else if (card.lastTopup !== null && at() - card.lastTopup < TOPUP_COOLDOWN_MS) expected = 'TOPUP_COOLDOWN';
          else if (card.status === 'closed') expected = 'CARD_CLOSED';
          else if (card.deposit + amount > card.limit) expected = 'CARD_LIMIT_EXCEEDED';
          else if (wallets[u]! < amount + fee) expected = 'INSUFFICIENT_WALLET_BALANCE';
          if (card.owner === u && expected !== 'TOPUP_COOLDOWN') card.lastTopup = at();
          const result = (await attempt('topup', expected, () => t.core.topup(caller, card.id, { amount }))) as
            | { platformFee: number; newCardBalance: number; walletBalance: number }
            | undefined;
          if (result) {
            wallets[u]! -= amount + fee;
            card.balance += amount;
            card.deposit += amount;
            totals.fees += fee;
            assert.equal(result.platformFee, fee);
            assert.equal(result.newCardBalance, card.balance);
            assert.equal(result.walletBalance, wallets[u]);
          }
        } else if (roll < 58) {
          const amount = random.int(100, 20_000);
          let expected: Outcome = 'ok';
          if (card.owner !== u) expected = 'CARD_NOT_FOUND';
          else if (card.lastWithdraw !== null && at() - card.lastWithdraw < WITHDRAW_COOLDOWN_MS) expected = 'WITHDRAW_COOLDOWN';
          else if (card.status === 'closed') expected = 'CARD_CLOSED';
          else if (amount > card.balance) expected = 'INSUFFICIENT_CARD_BALANCE';
          if (card.owner === u && expected !== 'WITHDRAW_COOLDOWN') card.lastWithdraw = at();
          if (await attempt('withdraw', expected, () => t.core.withdraw(caller, card.id, { amount }))) {
            card.balance -= amount;
            wallets[u]! += amount;
          }
        } else if (roll < 64) {
          let expected: Outcome = 'ok';
          if (card.owner !== u) expected = 'CARD_NOT_FOUND';
          else if (card.status === 'frozen') expected = 'ALREADY_FROZEN';
          else if (card.status !== 'active') expected = 'ONLY_ACTIVE_CAN_FREEZE';
          if (await attempt('freeze', expected, () => t.core.freeze(caller, card.id))) card.status = 'frozen';
        } else if (roll < 70) {
          let expected: Outcome = 'ok';
          if (card.owner !== u) expected = 'CARD_NOT_FOUND';
          else if (card.status !== 'frozen') expected = 'ONLY_FROZEN_CAN_UNFREEZE';
          if (await attempt('unfreeze', expected, () => t.core.unfreeze(caller, card.id))) card.status = 'active';
        } else if (roll < 71) {
          let expected: Outcome = 'ok';
          if (card.owner !== u) expected = 'CARD_NOT_FOUND';
          else if (card.status === 'closed') expected = 'ALREADY_CLOSED';
          else if (card.lastWithdraw !== null && at() - card.lastWithdraw < WITHDRAW_COOLDOWN_MS) expected = 'WITHDRAW_COOLDOWN';
          const result = (await attempt('close', expected, () => t.core.close(caller, card.id))) as
            | { balanceWithdrawn: number; newWalletBalance: number }
            | undefined;
          if (result) {
            assert.equal(result.balanceWithdrawn, card.balance);
            wallets[u]! += card.balance;
            assert.equal(result.newWalletBalance, wallets[u]);
            card.balance = 0;
            card.status = 'closed';
            card.lastWithdraw = at();
          }
        } else if (roll < 93) {
          const amount = random.int(1, 8_000);
          const purchase = await t.admin.simulatePurchase(card.id, amount);
          const declineCode =
            card.status === 'frozen'
              ? 'card_frozen'
              : card.status === 'closed'
                ? 'card_closed'
                : amount > card.balance
                  ? 'insufficient_funds'
                  : null;
          assert.equal(purchase.declineCode, declineCode);
          if (!declineCode) {
            card.balance -= amount;
            totals.purchases += amount;
          }
          assert.equal(purchase.cardBalance, card.balance);
        } else {
          const amount = random.int(1, 3_000);
          // A refund is never declined: onto the card, frozen or not, or the owner's wallet once it is closed.
          const refund = await t.admin.simulateRefund(card.id, amount);
          assert.equal(refund.status, 'Approved');
          if (card.status === 'closed') wallets[card.owner]! += amount;
          else card.balance += amount;
          totals.refunds += amount;
          assert.equal(refund.cardBalance, card.balance);
        }
      }

      if (process.env.DEBUG_OUTCOMES) console.log(JSON.stringify([...outcomes].sort()), cards.length);
      const ledger = await t.admin.checkLedger();
      assert.deepEqual(ledger.differences, []);
      assert.deepEqual(ledger.unbalancedJournals, []);
      assert.equal(ledger.total, 0);

      let held = 0;
      for (const [u, user] of users.entries()) {
        const wallet = (await t.core.walletBalance(user.caller)).balance;
        assert.equal(wallet, wallets[u], `wallet of user ${u}`);
        held += wallet;
        for (const read of await t.core.listCards(user.caller)) {
          const model = cards.find((c) => c.id === read.id)!;
          assert.deepEqual(
            { balance: read.balance, deposit: read.deposit, status: read.status },
            { balance: model.balance, deposit: model.deposit, status: model.status },
          );
          held += read.balance;
        }
      }
      assert.equal(held, totals.deposits + totals.initial - totals.fees - totals.purchases + totals.refunds);
      // The run exercised the refusals, not only the happy paths.
      for (const key of [
        'topup:ok',
        'topup:TOPUP_COOLDOWN',
        'topup:CARD_LIMIT_EXCEEDED',
        'withdraw:ok',
        'withdraw:WITHDRAW_COOLDOWN',
        'close:ok',
        'freeze:ok',
      ]) {
        assert.ok((outcomes.get(key) ?? 0) > 0, `never saw ${key}`);
      }
    });
  });
}
