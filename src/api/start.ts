import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { CoreRuntime } from '../compose.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createHttpServer } from './server.js';

export interface RunningHttpApi {
  app: FastifyInstance;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** Stops accepting connections and waits for in-flight requests; the core stays open. */
  close(): Promise<void>;
}

/**
 * Serves the HTTP API over a running core on `HTTP_HOST:HTTP_PORT`. For the combined bot + API
 * process and for `npm run api`; closing it leaves the core to its owner.
 */
export async function startHttpApi(
  runtime: CoreRuntime,
  config: Config,
  logger: Logger,
  /** Routes of other parts mounted before listening (the bot's webhook). */
  mount?: (app: FastifyInstance) => void,
): Promise<RunningHttpApi> {
  const app = createHttpServer({
    core: runtime.core,
    db: runtime.database.db,
    logger: logger.child({ component: 'api' }),
    clock: runtime.clock,
    bodyLimit: config.HTTP_BODY_LIMIT_BYTES,
  });
  mount?.(app);
  await app.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'HTTP API listening');
  return { app, url, close: () => app.close() };
}
