import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { accessLines, requestIds } from '../../src/api/access-log.js';
import { createHttpServer } from '../../src/api/server.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestCore, newCustomer } from '../helpers/core.js';

type Line = {
  level: number;
  time: number;
  pid: number;
  component?: string;
  msg: string;
  reqId?: string;
  method?: string;
  route?: string;
  status?: number;
  ms?: number;
  userId?: string;
};

test('access logs: each API request is logged once at info by route pattern, with its request id, never a token or a secret path', async (ctx) => {
  const t = await createTestCore();
  const lines: string[] = [];
  const app = createHttpServer({
    core: t.core,
    db: t.database.db,
    clock: t.clock,
    logger: createLogger('info', { write: (line: string) => void lines.push(line) }).child({ component: 'api' }),
  });
  // Mounted by another part, as the bot's webhook is: its path holds a secret.
  void app.register(async (other) => {
    other.post('/hook/s3cret-path', { config: { public: true } }, async () => ({ ok: true }));
  });
  ctx.after(async () => {
    await app.close();
    await t.close();
  });
  const alice = await newCustomer(t);
  const auth = { authorization: `Bearer ${alice.token}` };

  const wallet = await app.inject({ method: 'GET', url: '/api/v1/wallet/balance', headers: { ...auth, 'x-request-id': 'trace-abc.123' } });
  assert.equal(wallet.statusCode, 200);
  assert.equal(wallet.headers['x-request-id'], 'trace-abc.123', 'a sane incoming id is kept and echoed');
  const card = await app.inject({
    method: 'GET',
    url: '/api/v1/cards/00000000-0000-4000-8000-000000000000',
    headers: { ...auth, 'x-request-id': 'bad id with spaces' },
  });
  assert.equal(card.statusCode, 404);
  const madeId = card.headers['x-request-id'];
  assert.ok(typeof madeId === 'string' && madeId !== 'bad id with spaces' && /^[0-9a-f-]{36}$/.test(madeId), 'an insane id is replaced');
  const refused = await app.inject({
    method: 'GET',
    url: '/api/v1/wallet/balance',
    headers: { authorization: 'Bearer vc_not-a-real-token' },
  });
  assert.equal(refused.statusCode, 401);
  assert.ok(refused.headers['x-request-id'], 'a refusal carries an id too');
  const live = await app.inject({ method: 'GET', url: '/livez' });
  assert.ok(live.headers['x-request-id']);
  const hook = await app.inject({ method: 'POST', url: '/hook/s3cret-path', payload: {} });
  assert.equal(hook.statusCode, 200);
  const unknown = await app.inject({ method: 'GET', url: '/nowhere/at-all' });
  assert.equal(unknown.statusCode, 404);
  assert.ok(unknown.headers['x-request-id']);

  const access = lines.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
  assert.ok(
    access.every(
      (l) => l.level === 30 && typeof l.ms === 'number' && l.ms >= 0 && l.pid === process.pid && l.component === 'api' && l.time > 0,
    ),
  );
  assert.deepEqual(
    access.map((l) => [l.method, l.route, l.status, l.userId]),
    [
      ['GET', '/api/v1/wallet/balance', 200, alice.caller.userId],
      ['GET', '/api/v1/cards/:id', 404, alice.caller.userId],
      ['GET', '/api/v1/wallet/balance', 401, undefined],
      ['GET', '/livez', 200, undefined],
      ['POST', 'webhook', 200, undefined],
      ['GET', 'unmatched', 404, undefined],
    ],
  );
  assert.deepEqual(
    access.map((l) => l.reqId),
    [wallet, card, refused, live, hook, unknown].map((r) => r.headers['x-request-id']),
  );
  const log = lines.join('');
  for (const secret of [alice.token, 'vc_not-a-real-token', 's3cret-path', 'nowhere', 'authorization'])
    assert.ok(!log.includes(secret), `${secret} reached the log`);
});

test('access logs: an unknown path refused by the per-address limit is logged once too', async (ctx) => {
  const t = await createTestCore();
  const lines: string[] = [];
  const limits = { perTokenPerMinute: 100, perAddressPerMinute: 1, authFailuresPerAddress: 100 };
  const app = createHttpServer({
    core: t.core,
    db: t.database.db,
    clock: t.clock,
    limits,
    logger: createLogger('info', { write: (line: string) => void lines.push(line) }),
  });
  ctx.after(async () => {
    await app.close();
    await t.close();
  });
  assert.equal((await app.inject({ method: 'GET', url: '/nowhere' })).statusCode, 404);
  const refused = await app.inject({ method: 'GET', url: '/nowhere' });
  assert.equal(refused.statusCode, 429);
  const access = lines.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
  assert.deepEqual(
    access.map((l) => [l.route, l.status, l.reqId]),
    [
      ['unmatched', 404, access[0]!.reqId],
      ['unmatched', 429, refused.headers['x-request-id']],
    ],
  );
});

test('access lines are built as text, and each is the line pino itself writes for the same fields', () => {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) }).child({ component: 'api' });
  const line = accessLines(logger)!('/api/v1/cards/:id');
  const requests = [
    { id: 'plain-id', method: 'GET', caller: { userId: 'u-1', walletAccountId: 1 } },
    { id: 'a"quoted\\id}', method: 'POST', caller: null },
    { id: 'tab\there\u2028😀', method: 'GET', caller: { userId: 'u-"2"', walletAccountId: 2 } },
  ];
  const pinoLines: string[] = [];
  const pinoLogger = createLogger('info', { write: (l: string) => void pinoLines.push(l) }).child({ component: 'api' });
  for (const [i, request] of requests.entries()) {
    line(request as never, 200 + i, 1.5 * i);
    const fields = { reqId: request.id, method: request.method, route: '/api/v1/cards/:id', status: 200 + i, ms: 1.5 * i };
    pinoLogger.info(request.caller ? { ...fields, userId: request.caller.userId } : fields, 'request');
  }
  const withoutTime = (l: string) => l.replace(/,"time":\d+/, '');
  assert.deepEqual(lines.map(withoutTime), pinoLines.map(withoutTime), 'the same text, key order included');
  assert.ok(lines.every((l) => Math.abs(JSON.parse(l).time - Date.now()) < 5_000));
});

test('access lines go through pino when its stream wants the lines one by one (a multistream), and none below info', () => {
  const lines: string[] = [];
  const logger = createLogger('info', pino.multistream([{ level: 'info', stream: { write: (l: string) => void lines.push(l) } }]));
  accessLines(logger)!('/livez')({ id: 'r-1', method: 'GET', caller: null } as never, 200, 0.4);
  assert.deepEqual(JSON.parse(lines[0]!), {
    ...JSON.parse(lines[0]!),
    level: 30,
    reqId: 'r-1',
    route: '/livez',
    status: 200,
    ms: 0.4,
    msg: 'request',
  });
  assert.equal(accessLines(createLogger('warn', { write: () => assert.fail('written below its level') })), undefined);
});

test("an access line's time is pino's epoch milliseconds, to the millisecond, across seconds", (ctx) => {
  const lines: string[] = [];
  const line = accessLines(createLogger('info', { write: (l: string) => void lines.push(l) }))!('/livez');
  const moments = [
    1_764_000_000_005, 1_764_000_000_050, 1_764_000_000_999, 1_764_000_001_000, 1_764_000_001_001, 1_764_000_000_500, 1_764_000_123_456,
  ];
  let next = 0;
  ctx.mock.method(Date, 'now', () => moments[next++]);
  for (const _ of moments) line({ id: 'r', method: 'GET', caller: null } as never, 200, 1);
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).time),
    moments,
  );
});

test('request ids a process makes are UUIDs (version 4 by their shape) and never the same twice, past a million of them', () => {
  const next = requestIds();
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const seen = new Set<string>();
  for (let i = 0; i < 1_000_010; i++) {
    const id = next();
    if (i % 1000 === 0 || i > 999_990) {
      assert.match(id, UUID_V4);
      assert.ok(!seen.has(id), `${id} made twice`);
      seen.add(id);
    }
  }
  assert.notEqual(requestIds()().slice(0, 24), next().slice(0, 24), 'each maker draws its own random part');
});
