import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { startRedisServer } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

type Line = {
  productId: number;
  action: string;
  gateAfter: number | null;
  inFlight: number;
  mysqlStock: number;
};

describe('drill: Redis restarted empty', () => {
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let stack: RealStack;
  let api: SeckillService;
  let client: ApiClient;

  beforeAll(async () => {
    redis = await startRedisServer(27_000 + Math.floor(Math.random() * 2_000));
    stack = await createRealStack({ SECKILL_REDIS_URL: redis.url, SECKILL_RECONCILE_SETTLE_MS: '300' });
    // the API alone first: what it accepts stays in flight while Redis goes away
    api = await stack.start({ http: true, worker: false });
    client = new ApiClient(api.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
    await redis.kill();
  });

  it('answers 503 while the gate is not loaded, and reconciliation rebuilds it from MySQL minus what is in flight', async () => {
    const productId = await client.listProduct({
      name: 'Restart',
      stock: 100,
      perUserLimit: 1,
      maxPerOrder: 1,
    });
    const before = await runFlood(client, { productId, buyers: 30, concurrency: 8, seed: 9, repeats: 0 });
    expect(before.accepted).toHaveLength(30);

    await redis.restartEmpty();
    const lost = await client.request('POST', '/api/v1/seckill/orders', {
      token: await client.token('late-1'),
      json: { productId, quantity: 1 },
    });
    expect(lost.status).toBe(503);
    expect(lost.body['code']).toBe('UNAVAILABLE');

    const reconcile = async (): Promise<Line | undefined> => {
      const answer = await client.request('POST', '/api/v1/admin/reconciliations', {
        token: await client.token('root', 'admin'),
      });
      return (answer.body['products'] as Line[] | undefined)?.find((l) => l.productId === productId);
    };
    // ioredis reconnects in the background; the first reconciliation after it rebuilds the gate
    await eventually(
      async () =>
        expect(await reconcile()).toMatchObject({
          action: 'REBUILT',
          inFlight: 30,
          mysqlStock: 100,
          gateAfter: 70,
        }),
      20_000,
      200,
    );

    const worker = await stack.start({ http: false, worker: true });
    // a buyer who already holds his one unit: the restarted gate forgot his quota, MySQL's check has not
    const again = await client.request('POST', '/api/v1/seckill/orders', {
      token: await client.token(`buyer-${before.accepted[0]!.buyer}`),
      json: { productId, quantity: 1 },
    });
    expect(again.status).toBe(202);
    await drained(worker, 120_000);
    const repeated = await client.request('GET', `/api/v1/orders/${String(again.body['orderId'])}`, {
      token: await client.token(`buyer-${before.accepted[0]!.buyer}`),
    });
    expect(repeated.body).toMatchObject({ status: 'RELEASED', reason: 'LIMIT_EXCEEDED' });

    const after = await runFlood(client, {
      productId,
      buyers: 200,
      concurrency: 16,
      seed: 10,
      repeats: 0,
      buyerPrefix: 'late',
    });
    expect(after.accepted).toHaveLength(70);
    await drained(worker, 120_000);

    expect(await before.decide()).toEqual({ sold: 30, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    expect(await after.decide()).toEqual({ sold: 70, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    const report = await expectBooksAgree(client, [productId]);
    expect(report.products.find((p) => p.productId === productId)).toMatchObject({
      sold: 100,
      mysqlStock: 0,
      gateStock: 0,
    });
  });
});
