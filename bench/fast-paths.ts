// The three small fast paths against the library's own path, in one run: N calls each, several rounds
// alternated, the median ns a call. `npx tsx bench/fast-paths.ts`; not one of `npm run bench` (a few seconds). Figures in the
// files' headers and docs/performance.md.
import type { FastifyInstance, onResponseHookHandler, RouteOptions } from 'fastify';
import { Histogram, Registry } from 'prom-client';
import { accessLines } from '../src/api/access-log.js';
import { createApiMetrics } from '../src/api/metrics.js';
import { isoTime } from '../src/infra/clock.js';
import { createLogger } from '../src/infra/logger.js';

const N = 200_000;
const ROUNDS = 7;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** ns a call of each, the median of `ROUNDS` rounds of N calls, the two run alternately. */
function compare(name: string, fast: (i: number) => unknown, library: (i: number) => unknown): void {
  const times: { fast: number[]; library: number[] } = { fast: [], library: [] };
  let sink: unknown;
  for (let round = -1; round < ROUNDS; round++) {
    for (const [which, fn] of [
      ['fast', fast],
      ['library', library],
    ] as const) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < N; i++) sink = fn(i);
      const ns = Number(process.hrtime.bigint() - start) / N;
      if (round >= 0) times[which].push(ns); // round -1 warms up
    }
  }
  const f = median(times.fast);
  const l = median(times.library);
  const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
  console.log(
    `${name}: fast ${f.toFixed(0)} ns, library ${l.toFixed(0)} ns, saved ${(l - f).toFixed(0)} ns a call ` +
      `(spread ${(spread(times.fast) * 100).toFixed(0)} % / ${(spread(times.library) * 100).toFixed(0)} %)${sink === undefined ? '' : ''}`,
  );
}

// 1. The envelope's timestamp: a clock that moves a few ms between requests.
const base = Date.now();
compare(
  'isoTime',
  (i) => isoTime(base + (i >> 3)),
  (i) => new Date(base + (i >> 3)).toISOString(),
);

// 2. One access line, to a stream that drops it (the logger's own work only).
const logger = createLogger('info', { write: () => undefined }).child({ component: 'api' });
const line = accessLines(logger)!('/api/v1/wallet/balance');
const access = logger.child({}, { redact: [] });
const request = { id: '3f0c2a4e-9b1d-4c7a-8e2f-000000123456', method: 'GET', caller: { userId: 'u_1234567890' } } as never;
compare(
  'access line',
  () => line(request, 200, 1.3),
  () =>
    access.info(
      {
        reqId: '3f0c2a4e-9b1d-4c7a-8e2f-000000123456',
        method: 'GET',
        route: '/api/v1/wallet/balance',
        status: 200,
        ms: 1.3,
        userId: 'u_1234567890',
      },
      'request',
    ),
);

// 3. One request duration: the route's own hook against prom-client's labelled histogram.
let onRoute: ((route: RouteOptions) => void) | undefined;
createApiMetrics(new Registry()).instrument({
  addHook: (_: string, hook: typeof onRoute) => (onRoute = hook),
} as unknown as FastifyInstance);
const route = { method: 'GET', url: '/api/v1/wallet/balance' } as RouteOptions;
onRoute!(route);
const observe = route.onResponse as unknown as onResponseHookHandler[];
const hook = observe[observe.length - 1]! as unknown as (request: unknown, reply: unknown, done: () => void) => void;
const reply = { statusCode: 200, elapsedTime: 1.3 };
const done = () => undefined;
const histogram = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by route, method and status',
  labelNames: ['method', 'route', 'status_code'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [new Registry()],
});
compare(
  'histogram',
  () => hook({ method: 'GET' }, reply, done),
  () => histogram.observe({ method: 'GET', route: '/api/v1/wallet/balance', status_code: reply.statusCode }, reply.elapsedTime / 1000),
);
