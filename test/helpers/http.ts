import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/api/server.js';
import { createLogger } from '../../src/logger.js';
import type { CoreSettings } from '../../src/core/settings.js';
import { createTestCore, type TestCore } from './core.js';

export interface TestApi {
  t: TestCore;
  app: FastifyInstance;
  baseUrl: string;
  /** A request over real HTTP; `body` objects are sent as JSON, strings as they are. */
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  close(): Promise<void>;
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
export async function startTestApi(options: { settings?: Partial<CoreSettings>; bodyLimit?: number; asyncIssue?: boolean } = {}): Promise<TestApi> {
  const t = await createTestCore({ settings: options.settings, asyncIssue: options.asyncIssue });
  const app = createHttpServer({
    core: t.core,
    db: t.database.db,
    logger: createLogger('silent'),
    clock: t.clock,
    bodyLimit: options.bodyLimit,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

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
    async close() {
      await app.close();
      await t.close();
    },
  };
}
