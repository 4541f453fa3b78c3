// The HTTP API in an OS process of its own, to be killed mid-request: spawned by idempotency-crash.test.ts.
// Serves the SQLite file given; a withdrawal stops inside its transaction, at the provider, and says so
// on stdout, so that the parent can kill the process (SIGKILL) while the request is in flight.
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/api/server.js';
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

const [file, at] = process.argv.slice(2) as [string, string];
const clock = new FakeClock(at);
const t = await startCore({ databaseUrl: file, cardDataKey: TEST_CARD_DATA_KEY, clock });
t.provider.withdraw = () => {
  console.log('in-provider');
  return new Promise<void>(() => {});
};
const app = createHttpServer({ core: t.core, db: t.database.db, logger: createLogger('silent'), clock });
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`port ${(app.server.address() as AddressInfo).port}`);
