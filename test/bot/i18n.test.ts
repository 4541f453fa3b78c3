import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Fluent, I18n, type TranslationVariables } from '@grammyjs/i18n';
import { cardView, transactionLine } from '../../src/bot/ui/format.js';
import { createI18n, createTranslators, I18N_INTERNALS_VERSION, LOCALES_FOLDER } from '../../src/bot/ui/i18n.js';
import { REFUSAL_TEXTS } from '../../src/bot/ui/refusal-texts.js';

const sourceOf = (locale: string) => readFileSync(path.join(LOCALES_FOLDER, `${locale}.ftl`), 'utf8');
const keysOf = (locale: string) =>
  new Set(
    sourceOf(locale)
      .split('\n')
      .map((line) => /^([a-z][\w-]*)\s*=/.exec(line)?.[1])
      .filter((key): key is string => key !== undefined),
  );

describe('texts', () => {
  it('Russian has every English text and no other', () => {
    assert.deepEqual([...keysOf('ru')].sort(), [...keysOf('en')].sort());
  });

  it('every refusal text and hint exists as a text', () => {
    const en = keysOf('en');
    for (const { key, hint } of Object.values(REFUSAL_TEXTS)) {
      assert.ok(en.has(key), key);
      assert.ok(en.has(hint), hint);
    }
  });

  it('card states, transaction sides and statuses and decline reasons are translated too', () => {
    const i18n = createI18n();
    const t = (locale: string) => (key: string, params?: TranslationVariables) => i18n.t(locale, key, params);
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
    assert.match(transactionLine(t('ru'), tx), /^1 мар\. 2026 г\., 12:00 UTC · Ads · Списание 7,00\s\$ · Отклонена \(карта заморожена\)/);
    assert.match(transactionLine(t('en'), tx), /^Mar 1, 2026, 12:00 PM UTC · Ads · Debit \$7\.00 · Declined \(the card is frozen\)/);
  });
});

/** A text, or the error formatting it threw (a text with variables asked for without them). */
const outcome = (translate: () => string) => {
  try {
    return translate();
  } catch (error) {
    return `throws ${String(error)}`;
  }
};

describe('the fast path into the i18n plugin (src/bot/ui/i18n.ts, rememberBundleMatches)', () => {
  const hint = 'read rememberBundleMatches in src/bot/ui/i18n.ts against the new plugin, then update I18N_INTERNALS_VERSION';

  it('is written against the installed @grammyjs/i18n: a version bump fails here first', () => {
    const installed = (createRequire(import.meta.url)('@grammyjs/i18n/package.json') as { version: string }).version;
    assert.equal(installed, I18N_INTERNALS_VERSION, `@grammyjs/i18n is now ${installed}: ${hint}`);
  });

  it('still finds the private method it remembers the answers of', () => {
    const internals = Fluent.prototype as unknown as Record<string, unknown>;
    assert.equal(typeof internals.matchBundles, 'function', `Fluent.matchBundles is gone: ${hint}`);
  });

  it('translates every text exactly as the plugin left alone does, in English, Russian and any other locale', () => {
    const plain = new I18n({ defaultLocale: 'en', useSession: false, fluentBundleOptions: { useIsolating: false } });
    plain.loadLocalesDirSync(LOCALES_FOLDER);
    const fast = createI18n();
    const translatorFor = createTranslators(fast);
    // Every variable any text uses, so that no text is formatted with one missing.
    const variables = Object.fromEntries([...sourceOf('en').matchAll(/\$([\w-]+)/g)].map(([, name]) => [name!, '7']));
    for (const locale of ['en', 'ru', 'de']) {
      for (const key of keysOf('en')) {
        const expected = plain.t(locale, key, variables);
        assert.equal(fast.t(locale, key, variables), expected, `${locale} ${key}`);
        assert.equal(translatorFor(locale)(key, variables), expected, `${locale} ${key} (translator)`);
        assert.equal(
          outcome(() => translatorFor(locale)(key)),
          outcome(() => plain.t(locale, key)),
          `${locale} ${key} (no variables)`,
        );
      }
    }
  });
});
