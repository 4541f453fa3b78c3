import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Logger } from './logger.js';

/**
 * The process's one Prometheus registry, with the process defaults (memory, event loop, handles). The
 * HTTP API (src/api/metrics.ts) and the bot (src/bot/metrics.ts) add their metrics to it, so one
 * `/metrics` shows whatever runs in the process: the bot alone, the API alone, or both.
 */
export function metricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Postgres's connections as the processes share them (`DATABASE_POOL_SIZE`), read at each scrape. */
export function poolMetrics(registry: Registry, sharing: () => { processes: number; share: number }): void {
  new Gauge({
    name: 'db_pool_processes',
    help: 'Processes sharing the Postgres connections at the last count, this one included',
    registers: [registry],
    collect() {
      this.set(sharing().processes);
    },
  });
  new Gauge({
    name: 'db_pool_share',
    help: 'Postgres connections this process may use at once: its share of DATABASE_POOL_SIZE',
    registers: [registry],
    collect() {
      this.set(sharing().share);
    },
  });
}

export interface MetricsListener {
  /** e.g. `http://127.0.0.1:9464/metrics` */
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on a listener of its own (no token: keep it off the public network), so nothing of
 * it is reachable through the API's address; any other request is 404.
 */
export async function serveMetrics(registry: Registry, host: string, port: number, logger: Logger): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => {
        logger.error({ err: error }, 'Rendering metrics failed');
        response.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
