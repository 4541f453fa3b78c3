import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerDeps } from '../../src/api/server.js';
import { createLogger } from '../../src/infra/logger.js';
import type { CoreSettings } from '../../src/core/settings.js';
import { createTestCore, type TestCore } from './core.js';
import { createConformance, type Exchange } from './openapi-conformance.js';

export interface TestApi {
  t: TestCore;
  app: FastifyInstance;
  baseUrl: string;
  /** A request over real HTTP; `body` objects are sent as JSON, strings as they are. */
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  /** Every exchange made through `call`, in order. */
  exchanges: Exchange[];
  /**
   * Stops the server and the core, after checking every exchange against the OpenAPI document the
   * server serves (throws listing what does not conform), so no endpoint test can drift from it.
   */
  close(): Promise<void>;
}

export interface TestApiOptions {
  settings?: Partial<CoreSettings>;
  bodyLimit?: number;
  asyncIssue?: boolean;
  logLines?: string[];
  /** A core to serve (e.g. on Postgres, from `coreOn`); closed with the API. A fresh SQLite one otherwise. */
  core?: TestCore;
  /** Server options beyond the core's: request limits (none by default), idempotency bounds, metrics, timeout. */
  server?: Pick<HttpServerDeps, 'limits' | 'idempotency' | 'metrics' | 'requestTimeoutMs' | 'botReady' | 'trustProxy' | 'redis'>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A test core behind the HTTP server, listening on 127.0.0.1 on a free port. */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const t = options.core ?? (await createTestCore({ settings: options.settings, asyncIssue: options.asyncIssue }));
  const app = createHttpServer({
    core: t.core,
    db: t.database.db,
    logger: options.logLines
      ? createLogger('debug', { write: (line: string) => void options.logLines!.push(line) })
      : createLogger('silent'),
    clock: t.clock,
    bodyLimit: options.bodyLimit,
    ...options.server,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  const exchanges: Exchange[] = [];

  async function conformanceProblems(): Promise<string[]> {
    // From an address of its own, so the test's own requests never limit it.
    const served = await app.inject({ method: 'GET', url: '/api/v1/openapi.json', remoteAddress: '192.0.2.1' });
    const conformance = createConformance(served.json());
    return exchanges.flatMap((exchange) => conformance.check(exchange));
  }

  async function call(method: string, path: string, { token, body, headers = {} }: CallOptions = {}): Promise<ApiResponse> {
    const h: Record<string, string> = { ...headers };
    if (token !== undefined) h.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const response = await fetch(baseUrl + path, { method, headers: h, body: payload });
    const text = await response.text();
    exchanges.push({
      method,
      url: path,
      // As fetch sends them: a value's leading and trailing whitespace is dropped (the Fetch standard's
      // normalization), so a key the fuzzer ends with a space reaches the server without it.
      requestHeaders: Object.fromEntries(Object.entries(h).map(([name, value]) => [name, value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '')])),
      requestBody: payload,
      status: response.status,
      contentType: response.headers.get('content-type'),
      text,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  return {
    t,
    app,
    baseUrl,
    call,
    exchanges,
    async close() {
      let problems: string[] = [];
      try {
        problems = await conformanceProblems();
      } finally {
        await app.close();
        await t.close();
      }
      if (problems.length > 0) {
        throw new Error(`${problems.length} replies do not conform to the OpenAPI document:\n${problems.slice(0, 20).join('\n')}`);
      }
    },
  };
}

type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

/** Asserts `value` has exactly these fields (no more, no fewer), each of one of the given types. */
export function assertFields(value: unknown, fields: Record<string, FieldType | FieldType[]>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`Expected an object, got ${JSON.stringify(value)}`);
  const record = value as Record<string, unknown>;
  const expected = Object.keys(fields).sort();
  const actual = Object.keys(record).sort();
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    throw new Error(`Fields differ: expected ${expected.join(',')}; got ${actual.join(',')}`);
  }
  for (const [name, types] of Object.entries(fields)) {
    const v = record[name];
    const kind: FieldType = v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : (typeof v as FieldType);
    const allowed = Array.isArray(types) ? types : [types];
    const ok = allowed.includes(kind) || (kind === 'integer' && allowed.includes('number'));
    if (!ok) throw new Error(`Field ${name}: expected ${allowed.join('|')}, got ${JSON.stringify(v)}`);
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** The spec's success envelope: success, data, message, timestamp (ISO 8601 UTC). */
export function assertSuccess(response: ApiResponse, status = 200): any {
  if (response.status !== status) throw new Error(`Expected ${status}, got ${response.status}: ${response.text}`);
  assertFields(response.body, { success: 'boolean', data: ['object', 'array'], message: 'string', timestamp: 'string' });
  if (response.body.success !== true) throw new Error('success is not true');
  if (!ISO.test(response.body.timestamp)) throw new Error(`timestamp ${response.body.timestamp} is not ISO 8601 UTC`);
  return response.body.data;
}

/** An error envelope with the text in `message` (or in `error` for the OTP endpoints). */
export function assertFailure(response: ApiResponse, status: number, text: string, field: 'message' | 'error' = 'message'): void {
  if (response.status !== status) throw new Error(`Expected ${status}, got ${response.status}: ${response.text}`);
  assertFields(response.body, { success: 'boolean', [field]: 'string', timestamp: 'string' });
  if (response.body.success !== false) throw new Error('success is not false');
  if (response.body[field] !== text)
    throw new Error(`Expected ${field} ${JSON.stringify(text)}, got ${JSON.stringify(response.body[field])}`);
  if (!ISO.test(response.body.timestamp)) throw new Error('timestamp is not ISO 8601 UTC');
}

export function isIsoTime(value: unknown): boolean {
  return typeof value === 'string' && ISO.test(value);
}
