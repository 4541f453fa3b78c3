import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { I18n } from '@grammyjs/i18n';
import type { Context } from 'grammy';

export const LOCALES_FOLDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../locales');

/** Fluent texts from `locales/*.ftl`; the locale follows the user's Telegram language, English by default. */
export function createI18n<C extends Context>(): I18n<C & import('@grammyjs/i18n').I18nFlavor> {
  const i18n = new I18n<C & import('@grammyjs/i18n').I18nFlavor>({
    defaultLocale: 'en',
    useSession: false,
    fluentBundleOptions: { useIsolating: false },
    localeNegotiator: (ctx) => (ctx.from?.language_code?.startsWith('ru') ? 'ru' : 'en'),
  });
  i18n.loadLocalesDirSync(LOCALES_FOLDER);
  return i18n;
}
