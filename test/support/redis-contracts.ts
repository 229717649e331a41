import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { Cluster } from 'ioredis';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { RedisLock } from '../../src/adapters/redis/redis-lock.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { RedisSoldOutFlags } from '../../src/adapters/redis/redis-sold-out-flags.js';
import { RedisStockGate } from '../../src/adapters/redis/redis-stock-gate.js';
import { duplicateRequestLockContract } from '../contract/duplicate-request-lock.contract.js';
import { rateLimiterContract } from '../contract/rate-limiter.contract.js';
import { soldOutFlagsContract } from '../contract/sold-out-flags.contract.js';
import { stockGateContract } from '../contract/stock-gate.contract.js';

/** Each test writes under its own key namespace, so runs and tests never see each other's keys. */
export const freshNamespace = (): string => `t-${randomUUID()}:`;

/** Deletes a namespace's keys on every master. */
export const dropNamespace = async (client: RedisClient, namespace: string): Promise<void> => {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) await client.del(key);
    } while (cursor !== '0');
  }
};

/**
 * Runs the Redis adapters through the contract suites that the memory adapters pass, against the server(s)
 * at `url()` (one node, or a comma list for Redis Cluster).
 */
export const redisContracts = (label: string, url: () => string): void => {
  let client: RedisClient;
  const subscribers: RedisClient[] = [];
  const subscriber = () => {
    const s = connectRedis({ url: url() });
    subscribers.push(s);
    return s;
  };

  beforeAll(() => {
    client = connectRedis({ url: url(), commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await Promise.all(subscribers.map((s) => s.quit()));
    await client.quit();
  });

  const namespaces = new Map<object, string>();
  const drop = async (subject: object) => {
    const namespace = namespaces.get(subject);
    if (namespace) await dropNamespace(client, namespace);
  };
  const track = <T extends object>(subject: T, namespace: string): T => {
    namespaces.set(subject, namespace);
    return subject;
  };

  stockGateContract(
    `RedisStockGate (${label})`,
    () => {
      const ns = freshNamespace();
      return Promise.resolve(track(new RedisStockGate(client, ns), ns));
    },
    drop,
  );
  duplicateRequestLockContract(
    `RedisLock (${label})`,
    () => {
      const ns = freshNamespace();
      // a short watchdog lease: holding a lock for 300 ms then needs several renewals
      return Promise.resolve(
        track(new RedisLock(client, subscriber(), { namespace: ns, watchdogLeaseMs: 120 }), ns),
      );
    },
    drop,
  );
  rateLimiterContract(`RedisRateLimiter (${label})`, (options) =>
    Promise.resolve(new RedisRateLimiter(client, { ...options, namespace: freshNamespace() })),
  );
  soldOutFlagsContract(`RedisSoldOutFlags (${label})`, async () => {
    const ns = freshNamespace();
    const first = new RedisSoldOutFlags(client, subscriber(), ns);
    const second = new RedisSoldOutFlags(client, subscriber(), ns);
    await Promise.all([first.ready, second.ready]);
    return { first, second };
  });
};
