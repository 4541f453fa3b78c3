import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { ErrorCode, ParamsOf } from '../../src/core/rules/errors.js';
import { CardServiceError } from '../../src/core/rules/errors.js';
import { createInputSchemas } from '../../src/core/rules/schemas.js';
import { defaultCoreSettings } from '../../src/core/settings.js';
import { duration, REFUSAL_TEXTS, refusalMessage, refusalText, toRefusal, type Refusal } from '../../src/bot/ui/refusal-texts.js';
import { issueText } from '../../src/bot/conversations/kit.js';
import { createI18n, createTranslators, LOCALES_FOLDER } from '../../src/bot/ui/i18n.js';

const LOCALES = ['en', 'ru'] as const;
type Locale = (typeof LOCALES)[number];

const translatorFor = createTranslators(createI18n());
const keysOf = (locale: Locale) =>
  new Set([...readFileSync(path.join(LOCALES_FOLDER, `${locale}.ftl`), 'utf8').matchAll(/^([a-z][\w-]*)\s*=/gm)].map((m) => m[1]!));

/** Dollars as Intl formats them for the language: what every figure of a text must read as. */
const usd = (locale: Locale, cents: number) =>
  new Intl.NumberFormat(locale === 'ru' ? 'ru-RU' : 'en-US', { style: 'currency', currency: 'USD' }).format(cents / 100);

interface Example<C extends ErrorCode> {
  params: ParamsOf<C>;
  /** What the text must show, in each language. */
  figures: (locale: Locale) => string[];
}

/** A realistic refusal of every code; a code added to the core without one here does not compile. */
const EXAMPLES: { [C in ErrorCode]: Example<C> } = {
  VALIDATION: {
    params: {
      issues: [
        {
          code: 'too_small',
          minimum: 5,
          type: 'number',
          inclusive: true,
          exact: false,
          message: 'Minimum top-up amount is 5',
          path: ['amount'],
        },
        { code: 'too_big', maximum: 255, type: 'string', inclusive: true, exact: false, message: 'too long', path: ['name'] },
      ],
    },
    figures: (l) => [usd(l, 500), '255'],
  },
  INVALID_TOKEN: { params: {}, figures: () => [] },
  INSUFFICIENT_BALANCE: { params: { required: 150_000 }, figures: (l) => [usd(l, 150_000)] },
  INSUFFICIENT_WALLET_BALANCE: {
    params: { total: 205_030, amount: 200_000, fee: 5_030, available: 198_500 },
    figures: (l) => [usd(l, 205_030), usd(l, 200_000), usd(l, 5_030), usd(l, 198_500)],
  },
  CARD_LIMIT_EXCEEDED: {
    params: { deposit: 450_000, limit: 500_000, available: 50_000 },
    figures: (l) => [usd(l, 450_000), usd(l, 500_000), usd(l, 50_000)],
  },
  TOPUP_COOLDOWN: { params: { seconds: 95 }, figures: (l) => [l === 'ru' ? '1 мин 35 с' : '1 min 35 s'] },
  INSUFFICIENT_CARD_BALANCE: { params: { available: 1_250, requested: 2_000 }, figures: (l) => [usd(l, 1_250), usd(l, 2_000)] },
  WITHDRAW_COOLDOWN: { params: { seconds: 842, minutes: 15 }, figures: (l) => ['15', l === 'ru' ? '14 мин 2 с' : '14 min 2 s'] },
  CARD_NOT_READY_WITHDRAW: { params: {}, figures: () => [] },
  INVALID_BIN: { params: {}, figures: () => [] },
  INVALID_PLAN: { params: {}, figures: () => [] },
  INITIAL_BALANCE_OVER_LIMIT: { params: { initialBalance: 200_000, limit: 100_000 }, figures: (l) => [usd(l, 200_000), usd(l, 100_000)] },
  INVALID_COUPON: { params: { reason: 'coupon has expired' }, figures: (l) => [l === 'ru' ? 'срок купона истёк' : 'coupon has expired'] },
  CARD_NOT_FOUND: { params: {}, figures: () => [] },
  CARD_ID_REQUIRED: { params: {}, figures: () => [] },
  INVALID_CARD_ID_PARAM: { params: {}, figures: () => [] },
  CARD_CLOSED: { params: {}, figures: () => [] },
  ALREADY_FROZEN: { params: {}, figures: () => [] },
  ONLY_ACTIVE_CAN_FREEZE: { params: {}, figures: () => [] },
  CARD_NOT_READY_FREEZE: { params: {}, figures: () => [] },
  ONLY_FROZEN_CAN_UNFREEZE: { params: {}, figures: () => [] },
  CARD_NOT_READY_UNFREEZE: { params: {}, figures: () => [] },
  ALREADY_CLOSED: { params: {}, figures: () => [] },
  CARD_NOT_READY_CLOSE: { params: {}, figures: () => [] },
  CARD_PROCESSING: { params: {}, figures: () => [] },
  PROVIDER_FAILED: {
    params: { action: 'withdraw from', reason: 'upstream timeout (503)' },
    figures: (l) => ['upstream timeout (503)', l === 'ru' ? 'вывести деньги с карты' : 'withdraw from card'],
  },
  WALLET_NOT_FOUND: { params: {}, figures: () => [] },
  NO_OTP: { params: {}, figures: () => [] },
  SERVICE_REFUSED: { params: { text: 'Daily limit reached' }, figures: () => ['Daily limit reached'] },
  SERVICE_UNAVAILABLE: { params: {}, figures: () => [] },
  OUTCOME_UNKNOWN: { params: {}, figures: () => [] },
};

/** The refusal as the core raises it and the bot keeps it (through conversation state: plain JSON). */
const refusalOf = (code: ErrorCode): Refusal => {
  const error = new (CardServiceError as new (code: ErrorCode, params: unknown) => CardServiceError)(code, EXAMPLES[code].params);
  return JSON.parse(JSON.stringify(toRefusal(error))) as Refusal;
};

/** Anything Fluent leaves when a placeable does not resolve: `{$name}`, `{???}`, a bare `$name`. */
const UNRESOLVED = /\{\s*\$?[\w-]*\s*\}|\{\?\?\?\}|\$[a-z]/i;

describe('refusals in the chat language', () => {
  for (const code of Object.keys(EXAMPLES) as ErrorCode[]) {
    it(`${code} reads in English and in Russian, with its figures formatted for each`, () => {
      const refusal = refusalOf(code);
      const { key, hint } = REFUSAL_TEXTS[code];
      const texts = {} as Record<Locale, { message: string; full: string; hint: string }>;
      for (const locale of LOCALES) {
        const keys = keysOf(locale);
        assert.ok(keys.has(key), `${locale}.ftl has no ${key}`);
        assert.ok(keys.has(hint), `${locale}.ftl has no ${hint}`);
        const t = translatorFor(locale);
        const message = refusalMessage(t, refusal);
        const full = refusalText(t, refusal);
        texts[locale] = { message, full, hint: t(hint) };
        assert.doesNotMatch(full, UNRESOLVED, `${locale}: an unresolved placeable in "${full}"`);
        assert.ok(full.startsWith(message), `${locale}: the text begins with the refusal`);
        for (const figure of EXAMPLES[code].figures(locale))
          assert.ok(message.includes(figure), `${locale}: "${figure}" not in "${message}"`);
      }
      assert.notEqual(texts.ru.message, texts.en.message, `${code} is not translated into Russian`);
      assert.match(texts.ru.message, /[а-яё]/i, `${code}: no Russian words in "${texts.ru.message}"`);
      if (texts.en.hint.trim()) assert.notEqual(texts.ru.hint, texts.en.hint, `${hint} is not translated into Russian`);
    });
  }

  it("keeps the spec's English words for the refusals it names, with the amounts as money", () => {
    const t = translatorFor('en');
    assert.equal(
      refusalMessage(t, refusalOf('INSUFFICIENT_WALLET_BALANCE')),
      'Insufficient wallet balance. Required: $2,050.30 (topup: $2,000.00 + platform fee: $50.30), Available: $1,985.00',
    );
    assert.equal(refusalMessage(t, refusalOf('CARD_NOT_FOUND')), 'Card not found or access denied');
    assert.equal(refusalText(t, refusalOf('NO_OTP')), 'No OTP found for this card');
  });

  it('shows a cooldown as minutes and seconds, in each language', () => {
    const cases: [number, string, string][] = [
      [1, '1 s', '1 с'],
      [59, '59 s', '59 с'],
      [60, '1 min', '1 мин'],
      [120, '2 min', '2 мин'],
      [125, '2 min 5 s', '2 мин 5 с'],
      [900, '15 min', '15 мин'],
    ];
    for (const [seconds, en, ru] of cases) {
      assert.equal(duration(translatorFor('en'), seconds), en);
      assert.equal(duration(translatorFor('ru'), seconds), ru);
    }
  });

  it('declines the minutes of the withdrawal cooldown in Russian', () => {
    const t = translatorFor('ru');
    const withMinutes = (minutes: number) =>
      refusalMessage(t, { code: 'WITHDRAW_COOLDOWN', params: { seconds: 30, minutes }, message: '' });
    assert.match(withMinutes(1), /не меньше 1 минуты/);
    assert.match(withMinutes(15), /не меньше 15 минут /);
    assert.match(withMinutes(21), /не меньше 21 минуты/);
  });

  it("shows a typed amount's refusal in the chat's language, with the limit as money", () => {
    const schemas = createInputSchemas(defaultCoreSettings);
    const tooSmall = schemas.topup.safeParse({ amount: 1 });
    const tooPrecise = schemas.withdraw.safeParse({ amount: 1.005 });
    const notANumber = schemas.topup.safeParse({ amount: Number.NaN });
    assert.ok(!tooSmall.success && !tooPrecise.success && !notANumber.success);
    assert.equal(issueText(translatorFor('en'), tooSmall.error), `Minimum amount is ${usd('en', 500)}`);
    assert.equal(issueText(translatorFor('ru'), tooSmall.error), `Минимальная сумма — ${usd('ru', 500)}`);
    assert.equal(issueText(translatorFor('ru'), tooPrecise.error), 'В сумме не больше 2 знаков после запятой');
    assert.equal(issueText(translatorFor('ru'), notANumber.error), 'Сумма должна быть числом');
    const longName = schemas.createCard.shape.name.safeParse('x'.repeat(256));
    assert.ok(!longName.success);
    assert.equal(issueText(translatorFor('ru'), longName.error, 'name'), 'Название карты — не длиннее 255 символов');
  });

  it('shows a refusal kept by a version without figures in the words it was kept in', () => {
    const kept: Refusal = { code: 'TOPUP_COOLDOWN', message: 'Please wait 42 seconds before topping up this card again' };
    assert.equal(refusalMessage(translatorFor('ru'), kept), kept.message);
  });
});
