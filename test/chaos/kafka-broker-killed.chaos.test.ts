import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import type { KafkaCluster } from '../../scripts/kafka/cluster.js';
import { expectBooksAgree, expectOrdersAgree } from '../support/books.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { orderPartitionOf, requireCluster } from '../support/kafka.js';
import { BROKER_DRILL_ENV, createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

describe('drill: one Kafka broker SIGKILLed in the middle of a sale', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;
  let cluster: KafkaCluster;
  let killed: number | null = null;

  beforeAll(async () => {
    stack = await createRealStack(BROKER_DRILL_ENV);
    cluster = requireCluster(stack.broker);
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    // the next tests of this run want all three brokers, every replica in sync
    if (killed !== null) {
      await cluster.restart(killed);
      await cluster.inSync();
    }
    await stack.stop();
  }, 120_000);

  it("moves the dead broker's partitions to the others and loses no accepted order", async () => {
    const products = [
      await api.listProduct({ name: 'Killed A', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
      await api.listProduct({ name: 'Killed B', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
    ];
    // the broker that leads the partition product A's orders go to
    const { topic, partition, leader: victim } = await orderPartitionOf(stack.broker, products[0]!);

    const floods = await Promise.all(
      products.map((productId, i) =>
        runFlood(api, {
          productId,
          buyers: 200,
          concurrency: 16,
          seed: 70 + i,
          ...(i === 0
            ? {
                midway: {
                  after: 40,
                  action: async () => {
                    await cluster.kill(victim);
                    killed = victim;
                  },
                },
              }
            : {}),
        }),
      ),
    );
    expect(killed).toBe(victim);
    // buyers never wait for the broker: every one got a reservation or a rejection, never a 503
    for (const flood of floods) {
      expect(flood.unexpected).toEqual([]);
      expect(flood.accepted).toHaveLength(80);
    }
    // the controller fenced the dead broker and gave its partition to a replica in sync
    await eventually(
      async () => expect(await cluster.leaderOf(topic, partition)).not.toBe(victim),
      30_000,
      250,
    );

    await drained(service, 120_000);
    for (const flood of floods)
      expect(await flood.decide()).toEqual({ sold: 80, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectOrdersAgree(stack.db, await expectBooksAgree(api, products), products);
  }, 180_000);
});
