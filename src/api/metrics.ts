import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { Histogram, type Registry } from 'prom-client';
import { metricsRegistry } from '../infra/metrics.js';
import { asArray } from './auth.js';

/**
 * Prometheus metrics of the HTTP API: request durations by route, method and status, in the process's
 * registry (a registry of their own when none is given: the benchmarks). Served apart from the API, by
 * `serveMetrics` (`METRICS_PORT`).
 */
export function createApiMetrics(registry: Registry = metricsRegistry()) {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  return {
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
