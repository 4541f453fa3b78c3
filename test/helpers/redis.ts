import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../src/infra/redis.js';

/** The Redis the shared-count tests use: `TEST_REDIS_URL`, or the machine's own. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * How long the tests' Redis commands may take (`REDIS_COMMAND_TIMEOUT_MS`): a busy test machine can keep an
 * answer past the service's 500 ms, and a command given up on is counted in the process alone, which tests
 * of the one shared count would see as a wrong count.
 */
export const TEST_REDIS_COMMAND_TIMEOUT_MS = 5000;

/** Why the Redis tests cannot run here (given to `skip`), or false when Redis answers. */
export const redisUnavailable: string | false = await connectRedis(TEST_REDIS_URL, {
  keyPrefix: 'virtual-cards-test:',
  commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS,
}).then(
  async (redis): Promise<false> => {
    await closeRedis(redis);
    return false;
  },
  (error: Error) => `Redis is not reachable (${error.message}); start it or set TEST_REDIS_URL`,
);

export interface TestRedis {
  /** This test's key prefix (`REDIS_KEY_PREFIX` for processes the test starts). */
  prefix: string;
  /** Clients of "processes" sharing this test's keys; each closed by `cleanUp`. */
  connect(): Promise<Redis>;
  /** Closes the clients and deletes this test's keys, and only those. */
  cleanUp(): Promise<void>;
}

/** Redis clients under a key prefix of this test's own (`virtual-cards-test:<uuid>:`), so parallel runs never meet. */
export function testRedis(): TestRedis {
  const prefix = `virtual-cards-test:${randomUUID()}:`;
  const clients: Redis[] = [];
  return {
    prefix,
    async connect() {
      const redis = await connectRedis(TEST_REDIS_URL, { keyPrefix: prefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
      clients.push(redis);
      return redis;
    },
    async cleanUp() {
      await Promise.all(clients.map((client) => closeRedis(client)));
      const plain = new Redis(TEST_REDIS_URL);
      try {
        const keys = await plain.keys(`${prefix}*`);
        if (keys.length > 0) await plain.del(...keys);
      } finally {
        plain.disconnect();
      }
    },
  };
}
