import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LithicDocument, lithicDocument, lithicValidator, type Schema } from './lithic-openapi.js';

// Stoplight Prism as a mock of Lithic's OpenAPI document, with request validation on and `--errors`, so a
// request the document does not allow is answered 422 (or 401 without the API key) with an `sl-violations`
// header instead of a mocked answer. In front of it, a recorder keeps every exchange and checks it again
// with ajv against the same document (the request, and the response the caller reads).

const prismBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/prism');

/** One request that went through the recorder to Prism, and what came back. */
export interface PrismExchange {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  requestBody: unknown;
  status: number;
  responseBody: unknown;
  /** What Prism or ajv found wrong with the exchange: empty when both request and response are as documented. */
  violations: string[];
}

export interface RunningPrism {
  /** The recorder's base URL (give it to the adapter as LITHIC_API_URL). */
  url: string;
  /** Prism's own base URL (no recording). */
  prismUrl: string;
  /** Milliseconds from spawning Prism to its first answer. */
  startMs: number;
  exchanges: PrismExchange[];
  /** Every violation of every exchange so far, each prefixed by its request. */
  violations(): string[];
  stop(): Promise<void>;
}

export interface PrismOptions {
  /**
   * Mock only these paths of the document (with every component they reference, unchanged): Prism dereferences
   * the whole document before it listens, 7 s for Lithic's 600 operations on a loaded 2-core machine.
   */
  paths?: string[];
}

/**
 * Starts Prism on a free port of 127.0.0.1 with the recorder in front; one per test file.
 * @example const prism = await startPrism({ paths: ['/v1/cards', '/v1/cards/{card_token}'] }); … await prism.stop();
 */
export async function startPrism(options: PrismOptions = {}): Promise<RunningPrism> {
  const dir = mkdtempSync(path.join(tmpdir(), 'prism-'));
  const documentFile = path.join(dir, 'lithic-openapi.json');
  writeFileSync(documentFile, JSON.stringify(options.paths ? subset(lithicDocument(), options.paths) : lithicDocument()));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(prismBin, ['mock', documentFile, '-h', '127.0.0.1', '-p', String(port), '--errors', '-v', 'error'], {
    env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A test process that ends without stop() (a crash, a timeout) does not leave Prism behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  try {
    await waitForListening(child, port, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const startMs = Math.round(performance.now() - started);
  const prismUrl = `http://127.0.0.1:${port}`;
  const exchanges: PrismExchange[] = [];
  const recorder = createServer((request, response) => {
    record(prismUrl, request, response).then(
      (exchange) => exchanges.push(exchange),
      (error: unknown) => {
        exchanges.push({
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          requestBody: undefined,
          status: 502,
          responseBody: undefined,
          violations: [`the recorder failed: ${String(error)}`],
        });
        if (!response.headersSent) response.writeHead(502).end();
      },
    );
  });
  const recorderPort = await listen(recorder);
  return {
    url: `http://127.0.0.1:${recorderPort}`,
    prismUrl,
    startMs,
    exchanges,
    violations: () => exchanges.flatMap((e) => e.violations.map((v) => `${e.method} ${e.url}: ${v}`)),
    async stop() {
      process.off('exit', killOnExit);
      await new Promise<void>((resolve) => recorder.close(() => resolve()));
      recorder.closeAllConnections();
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function record(prismUrl: string, request: IncomingMessage, response: ServerResponse): Promise<PrismExchange> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  const method = request.method ?? 'GET';
  const url = request.url ?? '/';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && name !== 'host' && name !== 'connection' && name !== 'content-length') headers[name] = value;
  }
  const answer = await fetch(prismUrl + url, { method, headers, body: text === '' ? undefined : text });
  const answerText = await answer.text();
  const violations: string[] = [];
  const slViolations = answer.headers.get('sl-violations');
  if (slViolations !== null) {
    for (const v of JSON.parse(slViolations) as { location: string[]; message: string }[]) {
      violations.push(`Prism: ${v.location.join('.')} ${v.message}`);
    }
  }
  if (answer.status === 422 && slViolations === null) violations.push('Prism answered 422');
  let requestBody: unknown;
  let responseBody: unknown;
  try {
    requestBody = text === '' ? undefined : JSON.parse(text);
    responseBody = answerText === '' ? undefined : JSON.parse(answerText);
  } catch (error) {
    violations.push(`not JSON: ${String(error)}`);
  }
  const validator = lithicValidator();
  violations.push(...validator.request(method, url, requestBody).map((p) => `ajv: ${p}`));
  violations.push(...validator.response(method, url, answer.status, responseBody).map((p) => `ajv: ${p}`));
  const replyHeaders: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection' && name !== 'keep-alive')
      replyHeaders[name] = value;
  });
  response.writeHead(answer.status, replyHeaders).end(answerText);
  return { method, url, headers: request.headers, requestBody, status: answer.status, responseBody, violations };
}

/** The document with only `paths`, and the components they reach through `$ref` (transitively). */
function subset(document: LithicDocument, paths: string[]): Schema {
  const kept: Record<string, Record<string, Schema>> = {};
  const pending: unknown[] = [];
  const selected: Record<string, unknown> = {};
  for (const p of paths) {
    if (document.paths[p] === undefined) throw new Error(`the document has no path ${p}`);
    selected[p] = document.paths[p];
    pending.push(document.paths[p]);
  }
  const components = document.components as unknown as Record<string, Record<string, Schema>>;
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) pending.push(...value);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/')) {
          const [, , kind, name] = inner.split('/') as [string, string, string, string];
          kept[kind] ??= {};
          if (kept[kind]![name] === undefined) {
            kept[kind]![name] = components[kind]![name]!;
            pending.push(components[kind]![name]);
          }
        } else pending.push(inner);
      }
    }
  }
  const { paths: _paths, webhooks: _webhooks, components: all, ...rest } = document as unknown as Schema & { components: Schema };
  return { ...rest, paths: selected, components: { securitySchemes: all.securitySchemes, ...kept } };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** Resolves once Prism accepts a connection on `port`; rejects if it exits first or takes over 60 s. */
async function waitForListening(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Prism exited (${child.exitCode}) before listening:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`Prism did not listen within 60 s:\n${output()}`);
    const connected = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
