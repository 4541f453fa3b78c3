import { runService } from './app/run.js';

// `npm run api`: the HTTP interface alone, for deployments that do not run the bot.
await runService({ BOT_ENABLED: 'false', HTTP_ENABLED: 'true' });
