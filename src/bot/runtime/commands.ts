import type { CardsBot } from './cards-bot.js';

/** The command list shown by Telegram clients, in English and Russian. */
export async function setCommands(bot: CardsBot): Promise<void> {
  const { i18n, cards } = bot.services;
  // Money in is our embedded wallet's: not offered in front of another service (/deposit still says why).
  // `/addcard` is for a service that lists no cards (remote mode): ours lists them all.
  const names = ['start', 'menu', 'cards', 'topup', 'freeze', 'details', 'addcard', 'deposit', 'cancel', 'help', 'unlink'].filter(
    (c) => (c !== 'deposit' || cards.funding !== undefined) && (c !== 'addcard' || cards.mode === 'remote'),
  );
  for (const locale of ['en', 'ru'] as const) {
    const t = (key: string) => i18n.t(locale, key);
    const commands = names.map((c) => ({
      command: c,
      description: t(`cmd-${c}`),
    }));
    await bot.api.setMyCommands(commands, locale === 'en' ? {} : { language_code: locale });
  }
}
