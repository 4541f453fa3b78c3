// One process of a first start, spawned by compose.test.ts: the settings from the environment, then
// the same start as `npm start` and the admin command line (startCoreFromConfig) once the parent says go.
// Prints the number of BINs it sees; a failed start exits non-zero (2 for a card-data key problem).
import { startCoreFromConfig } from '../src/app/compose.js';
import { loadConfig } from '../src/app/config.js';
import { createLogger } from '../src/infra/logger.js';

const config = loadConfig(process.env);
console.log('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const runtime = await startCoreFromConfig(config, createLogger('silent'));
try {
  console.log(JSON.stringify({ bins: (await runtime.core.listBins()).length }));
} finally {
  await runtime.close();
}
