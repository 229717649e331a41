import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { gateKeys } from '../../src/adapters/redis/redis-stock-gate.js';
import { redisClusterForSuites } from '../support/redis-cluster.js';
import { redisContracts } from '../support/redis-contracts.js';

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
