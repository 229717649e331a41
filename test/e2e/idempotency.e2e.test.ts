import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { drained } from '../support/drained.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { myOrders, orderWithAnswerDropped, orderWithKey } from '../support/idempotency.js';
import { createRealStack, type RealStack } from '../support/real-stack.js';

type Profile = Readonly<{
  name: string;
  start: () => Promise<{ service: SeckillService; stop: () => Promise<void> }>;
}>;

const MEMORY_SECRET = 'seckill-idempotency-e2e-secret-0123456789';

const profiles: Profile[] = [
  {
    name: 'memory',
    start: async () => {
      // as on the real stack's tests: the buyer's budget does not turn the burst of one key away
      const service = await startMemoryService({
        SECKILL_JWT_SECRET: MEMORY_SECRET,
        SECKILL_RATE_LIMIT_POINTS: '1000',
      });
      return { service, stop: () => service.close() };
    },
  },
  {
    name: 'real (Redis, MariaDB, Kafka)',
    start: async () => {
      const stack: RealStack = await createRealStack({ SECKILL_JWT_SECRET: MEMORY_SECRET });
      const service = await stack.start();
      return { service, stop: () => stack.stop() };
    },
  },
];

describe.each(profiles)('retry-safe ordering over HTTP, on the $name profile', (profile) => {
  let stop: () => Promise<void>;
  let service: SeckillService;
  let api: ApiClient;

  const stockLeft = async (productId: number): Promise<number> =>
    (await api.request('GET', `/api/v1/products/${productId}`)).body['stockLeft'] as number;
  const eventsReplayed = async (): Promise<number> =>
    (await api.request('GET', '/api/v1/admin/audit', { token: await api.token('auditor', 'admin') })).body[
      'eventsReplayed'
    ] as number;

  beforeAll(async () => {
    ({ service, stop } = await profile.start());
    api = new ApiClient(service.url, MEMORY_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stop();
  });

  it('gives a buyer whose answer was dropped the same order on a retry with the key, and one unit', async () => {
    const productId = await api.listProduct({ name: 'Dropped', stock: 10, perUserLimit: 2, maxPerOrder: 1 });
    const token = await api.token('dropped-buyer');
    const key = randomUUID();

    await orderWithAnswerDropped(service.url, token, { productId, quantity: 1 }, key);
    // the buyer finds the order the lost answer was about
    const found = await myOrders(api, token, `?productId=${productId}`);
    expect(found.orders).toHaveLength(1);
    const orderId = found.orders[0]!['orderId'];

    const retry = await orderWithKey(api, token, { productId, quantity: 1 }, key);

    expect(retry.status).toBe(202);
    expect(retry.body['orderId']).toBe(orderId);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await stockLeft(productId)).toBe(9);
    expect((await myOrders(api, token, `?productId=${productId}`)).orders).toHaveLength(1);
  });

  it('answers 50 concurrent requests with one key with one reservation: 50 × 202, one orderId', async () => {
    const productId = await api.listProduct({ name: 'Burst', stock: 10, perUserLimit: 2, maxPerOrder: 1 });
    const token = await api.token('burst-buyer');
    const key = randomUUID();

    const answers = await Promise.all(
      Array.from({ length: 50 }, () => orderWithKey(api, token, { productId, quantity: 1 }, key)),
    );

    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    expect(new Set(answers.map((a) => a.body['orderId'])).size).toBe(1);
    expect(await stockLeft(productId)).toBe(9);
    const mine = await myOrders(api, token, `?productId=${productId}`);
    expect(mine.orders.map((o) => o['orderId'])).toEqual([answers[0]!.body['orderId']]);
  });

  it('refuses the same key with another body (422 problem+json) and writes nothing', async () => {
    const productId = await api.listProduct({ name: 'Reused', stock: 10, perUserLimit: 3, maxPerOrder: 3 });
    const token = await api.token('reusing-buyer');
    const key = randomUUID();
    expect((await orderWithKey(api, token, { productId, quantity: 1 }, key)).status).toBe(202);
    await drained(service);
    const before = await eventsReplayed();

    const other = await orderWithKey(api, token, { productId, quantity: 2 }, key);

    expect(other.status).toBe(422);
    expect(other.contentType).toContain('application/problem+json');
    expect(other.body).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await eventsReplayed()).toBe(before);
    expect(await stockLeft(productId)).toBe(9);
  });

  it('refuses a malformed key with a 400 naming the header, and takes nothing', async () => {
    const productId = await api.listProduct({ name: 'Malformed key', stock: 5 });
    const token = await api.token('malformed-key-buyer');

    const answer = await orderWithKey(api, token, { productId, quantity: 1 }, 'has space');

    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ field: 'header.Idempotency-Key' })],
    });
    expect(await stockLeft(productId)).toBe(5);
  });

  it("lists the caller's own orders newest first, a page at a time, and nobody else's", async () => {
    const first = await api.listProduct({ name: 'Mine A', stock: 10, perUserLimit: 2, maxPerOrder: 1 });
    const second = await api.listProduct({ name: 'Mine B', stock: 10 });
    const token = await api.token('lister');
    const placed: string[] = [];
    for (const productId of [first, second, first]) {
      const answer = await orderWithKey(api, token, { productId, quantity: 1 }, randomUUID());
      placed.push(answer.body['orderId'] as string);
    }
    await orderWithKey(api, await api.token('someone-else'), { productId: first, quantity: 1 }, randomUUID());

    const page1 = await myOrders(api, token, '?limit=2');
    const page2 = await myOrders(api, token, `?limit=2&cursor=${page1.next}`);
    const ofFirst = await myOrders(api, token, `?productId=${first}`);

    const all = [...page1.orders, ...page2.orders];
    // newest first: by the time of the reservation, then by order id for reservations of the same millisecond
    const newestFirst = [...all].sort(
      (a, b) =>
        String(b['reservedAt']).localeCompare(String(a['reservedAt'])) ||
        String(b['orderId']).localeCompare(String(a['orderId'])),
    );
    expect(all).toEqual(newestFirst);
    expect(new Set(all.map((o) => o['orderId']))).toEqual(new Set(placed));
    expect(page1.orders).toHaveLength(2);
    expect(page2.next).toBeNull();
    expect(new Set(ofFirst.orders.map((o) => o['orderId']))).toEqual(new Set([placed[0], placed[2]]));
    expect(page1.orders[0]).toMatchObject({ productId: first, quantity: 1, reservedAt: expect.any(String) });
    const badCursor = await api.request('GET', '/api/v1/orders?cursor=not-a-cursor', { token });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body).toMatchObject({ errors: [expect.objectContaining({ field: 'query.cursor' })] });
  });

  it('the "my orders" cursor is only what a page gave: any other string Date.parse accepts is a 400', async () => {
    const token = await api.token('cursor-prober');
    const cursorOf = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const parts of [
      ['1', "x' OR 1=1 -- "],
      ['Dec 4 2026', '00000000-0000-4000-8000-000000000000'],
      ['2026-12-04T10:00:00.000Z', "x' OR 1=1 -- "],
      ['2026-12-04T10:00:00.000Z', '00000000-0000-4000-8000-000000000000', 'more'],
    ]) {
      const answer = await api.request('GET', `/api/v1/orders?cursor=${cursorOf(parts)}`, { token });
      expect({ parts, status: answer.status, code: answer.body['code'] }).toEqual({
        parts,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    const good = cursorOf(['2026-12-04T10:00:00.000Z', '00000000-0000-4000-8000-000000000000']);
    expect((await api.request('GET', `/api/v1/orders?cursor=${good}`, { token })).status).toBe(200);
  });
});
