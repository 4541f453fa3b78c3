import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Histogram, Registry } from 'prom-client';
import { createApiMetrics } from '../../src/api/metrics.js';
import { startHttpApi } from '../../src/api/start.js';
import { loadConfig } from '../../src/app/config.js';
import type { CoreRuntime } from '../../src/app/compose.js';
import { createLogger, type Logger } from '../../src/infra/logger.js';
import { metricsRegistry, serveMetrics } from '../../src/infra/metrics.js';
import { createTestCore } from '../helpers/core.js';

// Extension: Prometheus metrics on a listener of their own (METRICS_HOST:METRICS_PORT), never beside the API.
// (test/metrics-process.test.ts runs the whole process with METRICS_PORT: the bot, the API, or both.)

/** The API collecting into the process's registry, and that registry served on its own listener, as src/app/run.ts does. */
async function apiWithMetrics(t: TestContext, runtime: CoreRuntime, logger: Logger, mount?: (app: FastifyInstance) => void) {
  const registry = metricsRegistry();
  const config = loadConfig({ HTTP_PORT: '0' });
  const api = await startHttpApi({ runtime, config, logger, mount, registry });
  t.after(() => api.close());
  const metrics = await serveMetrics(registry, '127.0.0.1', 0, logger);
  t.after(() => metrics.close());
  return { url: api.url, metricsUrl: metrics.url };
}

test('without a metrics registry the API port serves no /metrics', async (t) => {
  const runtime = await createTestCore();
  t.after(() => runtime.close());
  const api = await startHttpApi({ runtime, config: loadConfig({ HTTP_PORT: '0' }), logger: createLogger('silent') });
  t.after(() => api.close());
  const r = await fetch(`${api.url}/metrics`);
  assert.equal(r.status, 404);
  assert.equal(((await r.json()) as { message: string }).message, 'Route not found');
});

test('/metrics is served on its own listener with per-route durations; the API port does not serve it', async (t) => {
  const runtime = await createTestCore();
  t.after(() => runtime.close());
  const api = await apiWithMetrics(t, runtime, createLogger('silent'));
  assert.match(api.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  assert.notEqual(new URL(api.metricsUrl).port, new URL(api.url).port);

  await fetch(`${api.url}/livez`);
  await fetch(`${api.url}/api/v1/no-such-route`);
  await fetch(`${api.url}/api/v1/cards/%zz`);
  assert.equal((await fetch(`${api.url}/metrics`)).status, 404);

  const r = await fetch(api.metricsUrl);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
  const text = await r.text();
  assert.match(text, /http_request_duration_seconds_count\{method="GET",route="\/livez",status_code="200"\} 1/);
  assert.match(text, /http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="404"\} 2/);
  assert.match(text, /http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="400"\} 1/);
  assert.equal((await fetch(api.metricsUrl.replace('/metrics', '/other'))).status, 404);
});

test('a route mounted by another part (the webhook, its path a secret) is no metrics label and is not named in the log', async (t) => {
  const runtime = await createTestCore();
  t.after(() => runtime.close());
  const lines: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
  const secretPath = '/telegram/webhook-s3cr3t-path';
  const api = await apiWithMetrics(t, runtime, logger, (app) => {
    app.post(secretPath, { config: { public: true }, schema: { hide: true } }, async () => {
      throw new Error('the bot failed');
    });
  });

  const r = await fetch(api.url + secretPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(r.status, 500);
  const fault = lines
    .map((l) => JSON.parse(l) as { msg: string; err?: { message: string } })
    .find((l) => l.msg === 'Unexpected error while handling a request');
  assert.equal(fault?.err?.message, 'the bot failed');
  assert.ok(!lines.join('').includes('s3cr3t'), 'the webhook path reached the log');
  const metrics = await (await fetch(api.metricsUrl)).text();
  assert.ok(!metrics.includes('s3cr3t'), 'the webhook path is a metrics label');
});

test("the request durations read exactly as prom-client's own histogram with the same observations would", async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const metrics = createApiMetrics(ours);
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [theirs],
  });
  // On a bound, between bounds, past the last, for three series in turn.
  const observations = [
    ['GET', 404, 0.001],
    ['POST', 400, 0.0004],
    ['GET', 404, 0.0031],
    ['GET', 429, 3.5],
    ['POST', 400, 2.5],
    ['GET', 404, 0.25],
  ] as const;
  for (const [method, status, seconds] of observations) {
    metrics.observeUnmatched(method, status, seconds);
    histogram.labels({ method, route: 'unmatched', status_code: status }).observe(seconds);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.match(
    await ours.metrics(),
    /http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="unmatched",status_code="404"\} 3/,
  );
  ours.resetMetrics();
  assert.equal(
    await ours.metrics(),
    '# HELP http_request_duration_seconds HTTP request duration by route, method and status\n# TYPE http_request_duration_seconds histogram\n',
  );
});

test('after the registry is reset, a route it has timed before is counted and shown again', async (t) => {
  const registry = new Registry();
  const metrics = createApiMetrics(registry);
  const app = Fastify();
  t.after(() => app.close());
  metrics.instrument(app);
  app.get('/ping', async () => ({ ok: true }));
  const count = async () =>
    /http_request_duration_seconds_count\{method="GET",route="\/ping",status_code="200"\} (\d+)/.exec(await registry.metrics())?.[1];
  await app.inject({ method: 'GET', url: '/ping' });
  await app.inject({ method: 'GET', url: '/ping' });
  assert.equal(await count(), '2');
  registry.resetMetrics();
  assert.equal(await count(), undefined, 'gone after the reset, as with prom-client');
  await app.inject({ method: 'GET', url: '/ping' });
  assert.equal(await count(), '1');
});
