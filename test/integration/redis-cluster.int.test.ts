import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { connectRedis } from '../../src/adapters/redis/redis-connection.js';
import { gateKeys, RedisStockGate } from '../../src/adapters/redis/redis-stock-gate.js';
import { redisClusterForSuites } from '../support/redis-cluster.js';
import { dropNamespace, freshNamespace, redisContracts } from '../support/redis-contracts.js';

const cluster = redisClusterForSuites();

redisContracts('3-master Redis Cluster', () => cluster().url);

describe('key layout on Redis Cluster', () => {
  it('puts every key of one product in one slot, and spreads products over the masters', async () => {
    const node = new Redis(cluster().ports[0]!, '127.0.0.1');
    try {
      const slotOf = async (key: string) => Number(await node.call('CLUSTER', 'KEYSLOT', key));
      const slotsOfProduct = async (productId: number) =>
        new Set(await Promise.all(Object.values(gateKeys('', productId)).map(slotOf)));
      for (const productId of [1, 42, 1_000]) expect((await slotsOfProduct(productId)).size).toBe(1);
      const productSlots = new Set<number>();
      for (let productId = 1; productId <= 30; productId += 1)
        productSlots.add(await slotOf(gateKeys('', productId).stock));
      expect(productSlots.size).toBeGreaterThan(20);
      expect(await slotOf('{lock:seckill:7:42}')).toBe(await slotOf('{lock:seckill:7:42}:fence'));
    } finally {
      node.disconnect();
    }
  });
});

describe('the gate on Redis Cluster with auto-pipelining, as the service runs it', () => {
  it('sends the commands of products on different masters, issued in one turn, each to its own master', async () => {
    const client = connectRedis({ url: cluster().url, autoPipelining: true });
    const namespace = freshNamespace();
    const gate = new RedisStockGate(client, namespace);
    try {
      const products = Array.from({ length: 30 }, (_, i) => i + 1);
      await Promise.all(products.map((productId) => gate.warm(productId, 10)));
      // every buyer's unlock and a stock read of every product, all in the same turn of the event loop
      const answers = await Promise.allSettled(
        products.flatMap((productId) => [
          gate.unlock(productId, `buyer-${productId}`, 'an-order-that-never-locked'),
          gate.stockLeft(productId),
        ]),
      );
      expect(answers.filter((a) => a.status === 'rejected')).toEqual([]);
      expect(answers.map((a) => (a as PromiseFulfilledResult<unknown>).value)).toEqual(
        products.flatMap(() => [false, 10]),
      );
    } finally {
      await dropNamespace(client, namespace);
      await client.quit();
    }
  });
});
