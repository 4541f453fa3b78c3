import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../src/redis.js';

/** The Redis the shared-count tests use: `TEST_REDIS_URL`, or the machine's own. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why the Redis tests cannot run here (given to `skip`), or false when Redis answers. */
export const redisUnavailable: string | false = await connectRedis(TEST_REDIS_URL, 'virtual-cards-test:').then(
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
      const redis = await connectRedis(TEST_REDIS_URL, prefix);
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
