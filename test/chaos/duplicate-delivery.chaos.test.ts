import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { MessagePublisher } from '../../src/application/index.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

/** Publishes every message twice: each consumer group receives every message twice. */
const twice = (inner: MessagePublisher): MessagePublisher => ({
  publish: async (message) => {
    await inner.publish(message);
    await inner.publish(message);
  },
  publishMany: async (messages) => {
    await inner.publishMany(messages);
    await inner.publishMany(messages);
  },
});

describe('drill: every message delivered twice', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await createRealStack();
    service = await stack.start({ http: true, worker: true }, {}, { publisher: twice });
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('decides every order once and gives every cancelled unit back once', async () => {
    const productId = await api.listProduct({ name: 'Twice', stock: 50, perUserLimit: 1, maxPerOrder: 1 });
    const flood = await runFlood(api, { productId, buyers: 300, concurrency: 32, seed: 21 });
    expect(flood.unexpected).toEqual([]);
    expect(flood.accepted).toHaveLength(50);
    await drained(service, 120_000);
    expect(await flood.decide()).toEqual({ sold: 50, undecided: 0, maxUnitsPerBuyer: 1, released: {} });

    // ten buyers cancel: each release's compensation is delivered twice, and must give the unit back once
    for (const { buyer, orderId } of flood.accepted.slice(0, 10)) {
      const cancelled = await api.request('POST', `/api/v1/orders/${orderId}/cancel`, {
        token: await api.token(`buyer-${buyer}`),
      });
      expect(cancelled.body['status']).toBe('RELEASED');
    }
    await drained(service, 120_000);

    const connection = stack.db.orm.em.getConnection();
    const streams = await connection.execute<Array<{ n: number }>>(
      "SELECT COUNT(*) AS n FROM event_store WHERE stream_id LIKE 'order-%' GROUP BY stream_id ORDER BY n",
    );
    expect(streams.map((s) => Number(s.n))).toEqual([
      ...Array<number>(40).fill(2),
      ...Array<number>(10).fill(3),
    ]);
    const report = await expectBooksAgree(api, [productId]);
    expect(report.products.find((p) => p.productId === productId)).toMatchObject({
      sold: 40,
      mysqlStock: 10,
      gateStock: 10,
    });
  });
});
