import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { asArray } from './auth.js';

/** Extension: Prometheus metrics at `GET /metrics` (unauthenticated; keep it off the public network). */
export function installMetrics(app: FastifyInstance): { observeUnmatched(method: string, statusCode: number, seconds: number): void } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

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

  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });

  return {
    /** Requests no route took (unknown paths, URLs the router refused), under the route label `unmatched`. */
    observeUnmatched(method, statusCode, seconds) {
      duration.labels({ method, route: 'unmatched', status_code: statusCode }).observe(seconds);
    },
  };
}
