import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { ApiClient } from '../support/e2e-service.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

const BUYERS = 100;

/**
 * Every statement of a unit of work runs on its transaction's connection. A store that took a second pool
 * connection inside a transaction would, with 100 transactions wanting 5 connections, wait for a connection
 * only another waiting transaction could free: the pool runs dry and buyers get 503.
 */
describe('payments and cancellations at once on the real stack, 5 MySQL connections', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await createRealStack({ SECKILL_MYSQL_POOL_MIN: '1', SECKILL_MYSQL_POOL_MAX: '5' });
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('answers 100 concurrent pay and cancel requests without a 5xx, and the books agree', async () => {
    const productId = await api.listProduct({
      name: 'Burst',
      stock: BUYERS,
      perUserLimit: 1,
      maxPerOrder: 1,
    });
    const buyers = await Promise.all(
      Array.from({ length: BUYERS }, async (_, i) => ({ i, token: await api.token(`payer-${i}`) })),
    );
    const orders = await Promise.all(
      buyers.map(async ({ i, token }) => {
        const answer = await api.request('POST', '/api/v1/seckill/orders', {
          token,
          json: { productId, quantity: 1 },
        });
        expect(answer.status).toBe(202);
        return { i, token, orderId: String(answer.body['orderId']) };
      }),
    );
    await drained(service);

    const answers = await Promise.all(
      orders.map(({ i, token, orderId }) =>
        api.request('POST', `/api/v1/orders/${orderId}/${i % 2 ? 'cancel' : 'payment'}`, { token }),
      ),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses).toEqual(orders.map(() => 200));
    expect(answers.map((a) => a.body['status'])).toEqual(
      orders.map(({ i }) => (i % 2 ? 'RELEASED' : 'PAID')),
    );
    await drained(service);
    const report = await expectBooksAgree(api, [productId]);
    expect(report.products.find((p) => p.productId === productId)?.sold).toBe(BUYERS / 2);
  });
});
