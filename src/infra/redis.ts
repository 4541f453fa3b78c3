import { Redis } from 'ioredis';

export type { Redis };

export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
}

/**
 * The process's one Redis client (`REDIS_URL`, every key under `keyPrefix`), connected before anything is
 * served: a Redis that cannot be reached stops the start with an error naming the setting and the host
 * (never the URL, which may carry a password). Afterwards a command never waits for a lost connection
 * (no offline queue, no retry) and fails once unanswered for `commandTimeoutMs`, so its caller can fall
 * back (`WindowCounts`); the client reconnects by itself.
 *
 * @example
 * const redis = await connectRedis(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX, commandTimeoutMs: 500 });
 * // … on shutdown
 * await closeRedis(redis);
 */
export async function connectRedis(url: string, options: { keyPrefix: string; commandTimeoutMs: number }): Promise<Redis> {
  const redis = new Redis(url, {
    keyPrefix: options.keyPrefix,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
  });
  // Failures reach the callers of the commands (who log them once per outage); the event needs a
  // listener all the same, else ioredis prints each one.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const cause = lastError ?? (error as Error);
    throw new RedisUnreachableError(`REDIS_URL: cannot reach Redis at ${redisAddress(url)} (${cause.message})`);
  }
  return redis;
}

/** Host and port of a Redis URL, to name it where the URL itself (which may carry a password) must not go. */
export function redisAddress(url: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port || 6379}`;
}

/** Says goodbye to Redis, or just drops the connection when Redis is not there to hear it. */
export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
