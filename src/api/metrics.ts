import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { asArray } from './auth.js';

/**
 * Prometheus metrics of the HTTP API: request durations by route, method and status, plus the
 * process defaults. Collected here, served apart from the API by `serveMetrics` (`METRICS_PORT`).
 */
export function createApiMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  return {
    registry,

    /**
     * Times every route declared on `app` from now on, labelled with its path pattern. The server
     * calls it inside its own route plugin, so routes mounted by other parts (the bot's webhook,
     * whose path may hold a secret) are neither timed nor named.
     */
    instrument(app: FastifyInstance): void {
      // Each route gets its own hook with its label values fixed, and one child series per status.
      app.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method];
        const series = new Map<number, { observe(seconds: number): void }>();
        const observe: onResponseHookHandler = (request, reply, done) => {
          let child = series.get(reply.statusCode);
          if (!child) {
            child = duration.labels({ method: request.method, route: route.url, status_code: reply.statusCode });
            if (methods.length === 1) series.set(reply.statusCode, child);
          }
          child.observe(reply.elapsedTime / 1000);
          done();
        };
        route.onResponse = [...asArray(route.onResponse), observe];
      });
    },

    /** Requests no route took (unknown paths, URLs the router refused), under the route label `unmatched`. */
    observeUnmatched(method: string, statusCode: number, seconds: number): void {
      duration.labels({ method, route: 'unmatched', status_code: statusCode }).observe(seconds);
    },
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;

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
