import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { cardView, transactionLine } from '../../src/bot/format.js';
import { createI18n, LOCALES_FOLDER } from '../../src/bot/i18n.js';
import { REFUSAL_HINTS } from '../../src/bot/errors.js';

const keysOf = (locale: string) =>
  new Set(
    readFileSync(path.join(LOCALES_FOLDER, `${locale}.ftl`), 'utf8')
      .split('\n')
      .map((line) => /^([a-z][\w-]*)\s*=/.exec(line)?.[1])
      .filter((key): key is string => key !== undefined),
  );

describe('texts', () => {
  it('Russian has every English text and no other', () => {
    assert.deepEqual([...keysOf('ru')].sort(), [...keysOf('en')].sort());
  });

  it('every refusal hint exists as a text', () => {
    const en = keysOf('en');
    for (const key of Object.values(REFUSAL_HINTS)) assert.ok(en.has(key), key);
  });

  it('card states, transaction sides and statuses and decline reasons are translated too', () => {
    const i18n = createI18n();
    const t = (locale: string) => (key: string, params?: Record<string, string | number>) => i18n.t(locale, key, params);
    const card = {
      name: 'Ads',
      maskedPan: '**** **** **** 4242',
      balance: 1_000,
      status: 'frozen',
      planId: 1,
      limit: 100_000,
      deposit: 1_000,
    } as never;
    assert.match(cardView(t('ru'), card, undefined), /Статус: заморожена/);
    assert.match(cardView(t('en'), card, undefined), /Status: frozen/);
    const tx = {
      createdAt: '2026-03-01T12:00:00.000Z',
      cardName: 'Ads',
      side: 'Debit',
      amount: 700,
      currency: 'USD',
      status: 'Declined',
      declineCode: 'card_frozen',
      merchantName: 'Bakery',
    } as never;
    assert.match(transactionLine(t('ru'), tx), /Списание 7\.00 USD · Отклонена \(карта заморожена\)/);
    assert.match(transactionLine(t('en'), tx), /Debit 7\.00 USD · Declined \(the card is frozen\)/);
  });
});
