import { connect, createServer, type Socket } from 'node:net';
import { TEST_REDIS_URL } from './redis.js';

/** A TCP proxy in front of the test Redis that can hang: what Redis does under `CLIENT PAUSE`, for this test's clients only. */
export interface RedisProxy {
  /** The test Redis's URL, through the proxy. */
  url: string;
  /** Scripts (EVAL commands) the clients have sent through the proxy so far, answered or not: their round trips. */
  scripts(): number;
  /** From now on nothing the clients send reaches Redis, nor is answered; it is held until `resume`. */
  hang(): void;
  /** Passes on what was held, in order, and everything after. */
  resume(): void;
  close(): Promise<void>;
}

const EVAL = /\*\d+\r\n\$4\r\neval\r\n/gi;

export async function redisProxy(target = TEST_REDIS_URL): Promise<RedisProxy> {
  const upstreamUrl = new URL(target);
  let hung = false;
  let scripts = 0;
  const connections: { client: Socket; upstream: Socket; held: Buffer[] }[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(upstreamUrl.port || 6379), upstreamUrl.hostname);
    const connection = { client, upstream, held: [] as Buffer[] };
    connections.push(connection);
    client.on('data', (chunk: Buffer) => {
      scripts += chunk.toString('latin1').match(EVAL)?.length ?? 0;
      if (hung) connection.held.push(chunk);
      else upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.href,
    scripts: () => scripts,
    hang() {
      hung = true;
    },
    resume() {
      hung = false;
      for (const connection of connections) for (const chunk of connection.held.splice(0)) connection.upstream.write(chunk);
    },
    async close() {
      for (const { client, upstream } of connections) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
