import { embeddedCardService, type EmbeddedCardServiceDeps } from '../../src/bot/card-service/embedded.js';
import { webAppBotSide, type WebAppBotSide } from '../../src/bot/webapp.js';

/** The bot's side of the Mini App over the embedded core, as the composition root builds it (`src/app/run.ts`). */
export function embeddedWebApp({ core, db, clock }: Omit<EmbeddedCardServiceDeps, 'funding'>): WebAppBotSide {
  return webAppBotSide({ cards: embeddedCardService({ core, db, clock }), db });
}
