import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { embeddedCardService } from '../../src/bot/card-service/embedded.js';
import { isCardServiceError } from '../../src/bot/card-service/from-core.js';
import { cardView } from '../../src/bot/ui/format.js';
import type { CardService } from '../../src/core/service.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import { createTestCore, newCard, newCustomer } from '../helpers/core.js';
import { callbackUpdate, textUpdate } from '../helpers/updates.js';
import { buttonData, usd } from './conversations/kit.js';
import { createHarness, texts } from './harness.js';

const refusedWith = (code: string) => (error: unknown) => isCardServiceError(error) && error.code === code;

describe('the embedded card service: the port over the core', () => {
  it('hands over the core’s own rules and objects, as they are', async () => {
    const t = await createTestCore();
    const cards = embeddedCardService({ core: t.core, db: t.database.db, clock: t.clock });
    const me = await newCustomer(t);
    const card = await newCard(t, me);
    const account = await cards.account({ tokenHash: hashToken(me.token) });
    assert.equal(cards.mode, 'embedded');
    assert.equal(cards.rules.schemas, t.core.schemas);
    assert.equal(cards.rules.topupMin, t.core.settings.topupMin);
    assert.equal(account.userId, me.userId);
    assert.deepEqual(await account.getCard(card.id), await t.core.getCard(me.caller, card.id));
    assert.deepEqual(await account.listCards(), await t.core.listCards(me.caller));
    assert.equal((await cards.checkToken(me.token)).userId, me.userId);
    assert.ok(cards.events && cards.funding, 'our own extensions are there');
  });

  it('refuses a token that does not work with INVALID_TOKEN, and says it is not active', async () => {
    const t = await createTestCore();
    const cards = embeddedCardService({ core: t.core, db: t.database.db, clock: t.clock });
    await assert.rejects(cards.checkToken('vc_not-a-token'), refusedWith('INVALID_TOKEN'));
    await assert.rejects(cards.account({ tokenHash: hashToken('vc_not-a-token') }), refusedWith('INVALID_TOKEN'));
    assert.equal(await cards.tokenIsActive({ tokenHash: hashToken('vc_not-a-token') }), false);
  });
});

/** A core whose `name` answers as a service without that extension would (the port's `undefined`). */
const lacking = (...names: (keyof CardService)[]): Partial<CardService> =>
  Object.fromEntries(names.map((name) => [name, async () => undefined])) as Partial<CardService>;

describe('a service without the extensions: the bot still serves the user', () => {
  it('with no card listing, the card list offers the card the chat last opened', async () => {
    const h = await createHarness({ core: lacking('listCards') });
    const me = await h.linkedCustomer(9101);
    const card = await newCard(h.t, me, 'Travel');
    assert.match(texts(await h.send(textUpdate({ id: 9101 }, '/cards'))).join('\n'), /no cards yet/);
    await h.send(callbackUpdate({ id: 9101 }, `c:view:${card.id}`));
    const calls = await h.send(textUpdate({ id: 9101 }, '/cards'));
    assert.equal(buttonData(calls, 'Travel'), `c:view:${card.id}`);
  });

  it('with no top-up quote, the top-up is confirmed without the fee, which the result then tells', async () => {
    const h = await createHarness({ core: lacking('quoteTopup') });
    const me = await h.linkedCustomer(9102);
    const card = await newCard(h.t, me);
    await h.send(callbackUpdate({ id: 9102 }, `c:topup:${card.id}`));
    const asked = await h.send(textUpdate({ id: 9102 }, '50'));
    assert.match(texts(asked).join('\n'), /Top up “Ads” with \$50\.00\? The service tells its fee only once it is done/);
    const done = texts(await h.send(callbackUpdate({ id: 9102 }, buttonData(asked, 'Confirm')))).join('\n');
    assert.match(done, /Topped up \$50\.00 \(fee \$[\d.]+, total charged \$5\d\.\d\d\)/);
    assert.equal((await h.t.core.getCard(me.caller, card.id)).balance, 5_000);
  });

  it('a result without the wallet balance: the wallet is read afterwards', async () => {
    const h = await createHarness({
      core: {
        async withdraw(this: CardService, ...args: Parameters<CardService['withdraw']>) {
          const { walletBalance: _left, ...result } = await Object.getPrototypeOf(this).withdraw(...args);
          return result;
        },
      } as Partial<CardService>,
    });
    const me = await h.linkedCustomer(9103);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 5_000 });
    h.t.clock.advance(60 * 60_000);
    await h.send(callbackUpdate({ id: 9103 }, `c:withdraw:${card.id}`));
    const asked = await h.send(textUpdate({ id: 9103 }, '20'));
    const done = texts(await h.send(callbackUpdate({ id: 9103 }, buttonData(asked, 'Confirm')))).join('\n');
    const wallet = await h.t.core.walletBalance(me.caller);
    assert.ok(done.includes(`Withdrew $20.00. Card balance: $30.00. Wallet: ${usd(wallet.balance)}.`), done);
  });

  it('with no withdrawal quote, the card’s balance bounds the amount', async () => {
    const h = await createHarness({ core: lacking('quoteWithdrawal') });
    const me = await h.linkedCustomer(9104);
    const card = await newCard(h.t, me);
    await h.t.core.topup(me.caller, card.id, { amount: 3_000 });
    const asked = texts(await h.send(callbackUpdate({ id: 9104 }, `c:withdraw:${card.id}`))).join('\n');
    assert.match(asked, /How much to withdraw from “Ads” \(balance \$30\.00\)\? From \$[\d.]+ to \$30\.00/);
    const refused = texts(await h.send(textUpdate({ id: 9104 }, '40'))).join('\n');
    assert.match(refused, /The most you can withdraw now is \$30\.00/);
  });

  it('a card without limit, deposit or plan is shown with dashes', () => {
    const t = (key: string, params?: Record<string, unknown>) =>
      `${key}${params ? ` ${JSON.stringify(params, (_k, v) => (typeof v === 'object' && v && 'cents' in v ? 'money' : v))}` : ''}`;
    const view = cardView(
      t,
      { id: 'c1', name: 'Ads', maskedPan: '4111…1111', balance: 100, status: 'active', category: 'Online', currency: 'USD' },
      undefined,
    );
    assert.match(view, /"plan":"—","limit":"—","deposit":"—"/);
  });
});
