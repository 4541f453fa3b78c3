import { loadConfig } from '../app/config.js';
import { loadDotEnv } from '../app/env.js';
import { createLogger, processLogDestination } from '../infra/logger.js';
import { startCoreFromConfig } from '../app/compose.js';
import { CardDataKeyError } from '../core/keys/secrets.js';
import { runAdmin } from './run.js';

// `npm run admin -- <command>`: the operator's command line over the same database as the bot.
loadDotEnv();
try {
  const config = loadConfig();
  // Logs on standard error: with --json, standard output carries the one JSON answer and nothing else.
  const logger = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, processLogDestination());
  process.exitCode = await runAdmin(
    process.argv.slice(2),
    () => startCoreFromConfig(config, logger),
    { out: (text) => console.log(text), err: (text) => console.error(text) },
    { remote: config.CARD_SERVICE_URL !== undefined },
  );
} catch (error) {
  const message = (error as Error).message;
  if (process.argv.includes('--json')) console.log(JSON.stringify({ ok: false, error: message }));
  else console.error(`Error: ${message}`);
  // A missing or wrong card-data key is the operator's to fix, like a usage error: exit code 2.
  process.exitCode = error instanceof CardDataKeyError ? 2 : 1;
}
