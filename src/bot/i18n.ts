import { getOrCreate } from '../get-or-create.js';
import path from 'node:path';
import { I18n, type I18nFlavor } from '@grammyjs/i18n';
import type { Context } from 'grammy';
import { PACKAGE_ROOT } from '../package-root.js';

/** Russian for users whose Telegram is in Russian, English for everyone else. */
export const localeOf = (ctx: Context) => (ctx.from?.language_code?.startsWith('ru') ? 'ru' : 'en');

/** `locales/` at the project root, not compiled: the same folder from `src/` and from `dist/src/`. */
export const LOCALES_FOLDER = path.join(PACKAGE_ROOT, 'locales');

/** Fluent texts from `locales/*.ftl`; the locale follows the user's Telegram language, English by default. */
export function createI18n<C extends Context>(): I18n<C & I18nFlavor> {
  const i18n = new I18n<C & I18nFlavor>({
    defaultLocale: 'en',
    useSession: false,
    fluentBundleOptions: { useIsolating: false },
    localeNegotiator: localeOf,
  });
  i18n.loadLocalesDirSync(LOCALES_FOLDER);
  // Fluent negotiates the bundles on every translation; the answer per locale never changes here.
  const fluent = i18n.fluent as unknown as { matchBundles(locales: string[]): unknown[] };
  const match = fluent.matchBundles.bind(fluent);
  const matched = new Map<string, unknown[]>();
  fluent.matchBundles = (locales) => {
    const id = locales.join(',');
    return getOrCreate(matched, id, () => match(locales));
  };
  return i18n;
}

/**
 * Translators per locale, from the texts loaded by `createI18n`. Texts without variables are
 * remembered per locale; the plugin's own middleware negotiated the locale and the Fluent bundle anew
 * on every call, which was most of the cost of drawing a menu.
 */
export function createTranslators<C extends Context & I18nFlavor>(i18n: I18n<C>): (locale: string) => C['t'] {
  const translators = new Map<string, C['t']>();
  return (locale) => {
    let t = translators.get(locale);
    if (!t) {
      const memo = new Map<string, string>();
      t = ((key: string, variables?: Record<string, unknown>) => {
        if (variables) return i18n.t(locale, key, variables as never);
        return getOrCreate(memo, key, () => i18n.t(locale, key));
      }) as C['t'];
      translators.set(locale, t);
    }
    return t;
  };
}

/** Puts `ctx.t` on each update in the user's locale (for contexts made by plugins, such as conversations). */
export function translations<C extends Context & I18nFlavor>(i18n: I18n<C>) {
  const translatorFor = createTranslators(i18n);
  return (ctx: C, next: () => Promise<void>) => {
    const t = translatorFor(localeOf(ctx));
    ctx.t = t;
    ctx.translate = t;
    return next();
  };
}
