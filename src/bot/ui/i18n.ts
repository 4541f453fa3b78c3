import path from 'node:path';
import { type Fluent, I18n, type I18nFlavor } from '@grammyjs/i18n';
import type { Context } from 'grammy';
import { getOrCreate } from '../../infra/get-or-create.js';
import { PACKAGE_ROOT } from '../../infra/package-root.js';

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
  rememberBundleMatches(i18n.fluent);
  return i18n;
}

/** The version of @grammyjs/i18n whose internals `rememberBundleMatches` was written against. */
export const I18N_INTERNALS_VERSION = '1.1.2';

/**
 * The one place that reaches into the plugin's internals, for speed. The plugin negotiates the Fluent
 * bundles anew on every translation (`Fluent.matchBundles`, a private method): a sixth of the time of
 * a menu press, which nothing public avoids. The locales are loaded once, at start, so the answer per
 * list of locales never changes and is remembered. `test/bot/i18n.test.ts` fails when the plugin is not
 * the version above or the method is gone (without it, this does nothing and texts are only slower).
 */
function rememberBundleMatches(fluent: Fluent): void {
  const internals = fluent as unknown as { matchBundles?(locales: string[]): unknown };
  const match = internals.matchBundles?.bind(fluent);
  if (!match) return;
  const matched = new Map<string, unknown>();
  internals.matchBundles = (locales) => getOrCreate(matched, locales.join(','), () => match(locales));
}

/**
 * Translators per locale, over the plugin's public `t(locale, key, variables)`: what `ctx.t` is, in the
 * bot's context class and inside conversations. Texts without variables are remembered per locale (the
 * plugin's own middleware negotiated the locale anew on every update, and formatted every text anew).
 */
export function createTranslators<C extends Context & I18nFlavor>(i18n: I18n<C>): (locale: string) => C['t'] {
  const translators = new Map<string, C['t']>();
  // Asked on every `ctx.t`: a plain lookup, with no closure made per call.
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
export function translations<C extends Context & I18nFlavor>(translatorFor: (locale: string) => C['t']) {
  return (ctx: C, next: () => Promise<void>) => {
    const t = translatorFor(localeOf(ctx));
    ctx.t = t;
    ctx.translate = t;
    return next();
  };
}
