import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree, expectOrdersAgree } from '../support/books.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

describe('drill: the broker frozen and thawed while orders are being committed', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await createRealStack({
      SECKILL_OUTBOX_RELAY_MS: '500',
      SECKILL_OUTBOX_PENDING_GRACE_MS: '1000',
      SECKILL_OUTBOX_STALE_SENT_MS: '15000',
      SECKILL_KAFKA_REQUEST_TIMEOUT_MS: '1000',
    });
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.broker.thaw();
    await stack.stop();
  });

  it('keeps selling, outlives the consumer group losing its session, and decides every order once', async () => {
    const products = [
      await api.listProduct({ name: 'Frozen A', stock: 60, perUserLimit: 1, maxPerOrder: 1 }),
      await api.listProduct({ name: 'Frozen B', stock: 60, perUserLimit: 1, maxPerOrder: 1 }),
    ];
    const first = await runFlood(api, { productId: products[0]!, buyers: 200, concurrency: 16, seed: 31 });
    // frozen for longer than the consumers' session (6 s): the group loses its members and must rebuild
    await stack.broker.freeze();
    const second = await runFlood(api, { productId: products[1]!, buyers: 200, concurrency: 16, seed: 32 });
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    await stack.broker.thaw();

    for (const flood of [first, second]) {
      expect(flood.unexpected).toEqual([]);
      expect(flood.accepted).toHaveLength(60);
    }
    await drained(service, 120_000);
    for (const flood of [first, second])
      expect(await flood.decide()).toEqual({ sold: 60, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectOrdersAgree(stack.db, await expectBooksAgree(api, products), products);
  });
});
