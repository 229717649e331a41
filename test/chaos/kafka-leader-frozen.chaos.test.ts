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

const SESSION_TIMEOUT_MS = 6_000;

describe("drill: the order topic's partition leader frozen (SIGSTOP) past the consumers' session timeout", () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;
  let cluster: KafkaCluster;
  let frozen: number | null = null;

  beforeAll(async () => {
    stack = await createRealStack({
      ...BROKER_DRILL_ENV,
      SECKILL_KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
    });
    cluster = requireCluster(stack.broker);
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    if (frozen !== null) await cluster.thaw(frozen);
    await cluster.inSync();
    await stack.stop();
  }, 120_000);

  it('keeps selling while the leader is frozen, and once it thaws every order is decided once', async () => {
    const products = [
      await api.listProduct({ name: 'Frozen leader A', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
      await api.listProduct({ name: 'Frozen leader B', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
    ];
    const { topic, partition, leader } = await orderPartitionOf(stack.broker, products[0]!);

    const first = await runFlood(api, {
      productId: products[0]!,
      buyers: 200,
      concurrency: 16,
      seed: 81,
      midway: {
        after: 40,
        action: async () => {
          await cluster.freeze(leader);
          frozen = leader;
        },
      },
    });
    const frozenAt = Date.now();
    const second = await runFlood(api, { productId: products[1]!, buyers: 200, concurrency: 16, seed: 82 });
    // the controller fences the silent broker and moves its leaderships while it is still frozen
    await eventually(
      async () => expect(await cluster.leaderOf(topic, partition)).not.toBe(leader),
      30_000,
      250,
    );
    // held frozen past the consumers' session: a member whose coordinator or fetches sat on it must rejoin
    const held = SESSION_TIMEOUT_MS + 2_000 - (Date.now() - frozenAt);
    if (held > 0) await new Promise((resolve) => setTimeout(resolve, held));
    await cluster.thaw(leader);
    frozen = null;

    for (const flood of [first, second]) {
      expect(flood.unexpected).toEqual([]);
      expect(flood.accepted).toHaveLength(80);
    }
    await drained(service, 120_000);
    for (const flood of [first, second])
      expect(await flood.decide()).toEqual({ sold: 80, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectOrdersAgree(stack.db, await expectBooksAgree(api, products), products);
  }, 180_000);
});
