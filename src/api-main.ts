import { startHttpApi, type RunningHttpApi } from './api/start.js';
import { startCoreFromConfig } from './compose.js';
import { loadConfig } from './config.js';
import { loadDotEnv } from './env.js';
import { createLogger } from './logger.js';

// `npm run api`: the HTTP interface alone, for deployments that do not run the bot.
loadDotEnv();
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);
const runtime = await startCoreFromConfig(config, logger);
let api: RunningHttpApi;
try {
  api = await startHttpApi(runtime, config, logger);
} catch (error) {
  logger.fatal({ err: error }, 'The HTTP API could not start');
  await runtime.close();
  process.exit(1);
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'Shutting down');
  try {
    await api.close();
    await runtime.close();
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, 'Shutdown failed');
    process.exit(1);
  }
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
