import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { RedisInstanceRegistry } from '../../src/adapters/redis/redis-instance-registry.js';
import { RedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import { RedisSalePaths } from '../../src/adapters/redis/redis-sale-paths.js';
import { RedisStreamTickets } from '../../src/adapters/redis/redis-stream-tickets.js';
import { RedisSoldOutFlags } from '../../src/adapters/redis/redis-sold-out-flags.js';
import { GATE_SCRIPTS, RedisStockGate } from '../../src/adapters/redis/redis-stock-gate.js';
import { instanceRegistryContract } from '../contract/instance-registry.contract.js';
import { rateLimiterContract } from '../contract/rate-limiter.contract.js';
import { salePathsContract } from '../contract/sale-paths.contract.js';
import { streamTicketsContract } from '../contract/stream-tickets.contract.js';
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
    const s = connectRedis({ url: url(), subscriber: true });
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
      return Promise.resolve(
        track({ gate: new RedisStockGate(client, ns), paths: new RedisSalePaths(client, ns) }, ns),
      );
    },
    drop,
  );
  rateLimiterContract(`RedisRateLimiter (${label})`, (options) =>
    Promise.resolve(new RedisRateLimiter(client, { ...options, namespace: freshNamespace() })),
  );
  salePathsContract(`RedisSalePaths (${label})`, () =>
    Promise.resolve(new RedisSalePaths(client, freshNamespace())),
  );
  streamTicketsContract(`RedisStreamTickets (${label})`, () =>
    Promise.resolve(new RedisStreamTickets(client, freshNamespace())),
  );
  instanceRegistryContract(
    `RedisInstanceRegistry (${label})`,
    ({ retentionMs }) => {
      const ns = freshNamespace();
      return Promise.resolve(track(new RedisInstanceRegistry(client, ns, retentionMs), ns));
    },
    drop,
  );
  soldOutFlagsContract(`RedisSoldOutFlags (${label})`, async (marks) => {
    const ns = freshNamespace();
    const first = new RedisSoldOutFlags(client, subscriber(), ns, marks);
    const second = new RedisSoldOutFlags(client, subscriber(), ns, marks);
    await Promise.all([first.ready, second.ready]);
    return { first, second };
  });

  describe(`RedisStockGate scripts (${label})`, () => {
    const masters = () => (client instanceof Cluster ? client.nodes('master') : [client]);
    const reserveSha = createHash('sha1').update(GATE_SCRIPTS.RESERVE).digest('hex');
    const loadedSomewhere = async () =>
      (await Promise.all(masters().map((m) => m.script('EXISTS', reserveSha) as Promise<number[]>)))
        .flat()
        .includes(1);

    it('keeps working after SCRIPT FLUSH on every master between calls, and is called by SHA again', async () => {
      const ns = freshNamespace();
      const gate = new RedisStockGate(client, ns);
      const order = (orderId: string) => ({
        productId: 42,
        orderId,
        userId: orderId,
        quantity: 1,
        perUserLimit: 1,
      });
      try {
        await gate.warm(42, 5);
        expect(await gate.reserve(order('o1'))).toEqual({ ok: true, stockLeft: 4 });
        expect(await loadedSomewhere()).toBe(true);

        await Promise.all(masters().map((m) => m.script('FLUSH')));
        expect(await loadedSomewhere()).toBe(false);

        expect(await gate.reserve(order('o2'))).toEqual({ ok: true, stockLeft: 3 });
        expect(await gate.restore(42, 'o1')).toBe(true);
        expect(await gate.adjust(42, -1)).toBe(3);
        expect(await loadedSomewhere()).toBe(true);
        expect(await gate.stockLeft(42)).toBe(3);
      } finally {
        await dropNamespace(client, ns);
      }
    });
  });
};
