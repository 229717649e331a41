import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { drained } from '../support/drained.js';
import {
  type Answer,
  ApiClient,
  inParallel,
  requestFrom,
  startMemoryService,
} from '../support/e2e-service.js';

const ADDRESS_BUDGET = 50;
const STOCK = 100;
const BOTS = 1_000;

/** Answers by status, and the codes of the problems among them. */
const tally = (answers: readonly Answer[]) => {
  const statuses = new Map<number, number>();
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  return statuses;
};

describe('admission control on the memory profile, over HTTP', () => {
  describe('one address holding a thousand accounts', () => {
    let service: SeckillService;
    let api: ApiClient;

    beforeAll(async () => {
      service = await startMemoryService({
        SECKILL_ADDRESS_RATE_LIMIT_POINTS: String(ADDRESS_BUDGET),
        SECKILL_ADDRESS_RATE_LIMIT_WINDOW_SECONDS: '3600',
      });
      api = new ApiClient(service.url, service.config.jwtSecret);
    });
    afterAll(() => service.close());

    it('gets at most the per-address budget through; a buyer elsewhere still gets in; nothing is oversold', async () => {
      const productId = await api.listProduct({ name: 'Console', stock: STOCK });
      const tokens = await Promise.all(Array.from({ length: BOTS }, (_, i) => api.token(`bot-${i}`)));

      const answers = await inParallel(
        tokens.map(
          (token) => () =>
            api.request('POST', '/api/v1/seckill/orders', { token, json: { productId, quantity: 1 } }),
        ),
        64,
      );

      const statuses = tally(answers);
      expect((statuses.get(202) ?? 0) + (statuses.get(429) ?? 0)).toBe(BOTS);
      expect(statuses.get(202) ?? 0).toBeLessThanOrEqual(ADDRESS_BUDGET);
      for (const refused of answers.filter((a) => a.status === 429)) {
        expect(refused.contentType).toContain('application/problem+json');
        expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
        expect(String(refused.body['detail'])).toContain('this address');
      }
      // a buyer from another address is not held back by the bots' address
      const buyer = await requestFrom('127.0.0.2', `${service.url}/api/v1/seckill/orders`, {
        method: 'POST',
        token: await api.token('buyer-elsewhere'),
        json: { productId, quantity: 1 },
      });
      expect(buyer.status).toBe(202);

      await drained(service);
      const report = await expectBooksAgree(api, [productId]);
      const line = report.products.find((p) => p.productId === productId)!;
      expect(line.sold).toBe((statuses.get(202) ?? 0) + 1);
      expect(line.sold).toBeLessThanOrEqual(STOCK);
    });

    it('says when to come back, once the address has spent its budget on the product', async () => {
      const productId = await api.listProduct({ name: 'Handheld', stock: STOCK });
      // the budget is the address's on this product
      for (let i = 0; i < ADDRESS_BUDGET; i += 1)
        await api.request('POST', '/api/v1/seckill/orders', {
          token: await api.token(`early-bot-${i}`),
          json: { productId, quantity: 1 },
        });
      const answer = await fetch(`${service.url}/api/v1/seckill/orders`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await api.token('late-bot')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ productId, quantity: 1 }),
      });

      expect(answer.status).toBe(429);
      const seconds = Number(answer.headers.get('retry-after'));
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(3600);
    });
  });

  describe('behind a trusted proxy', () => {
    let service: SeckillService | null = null;
    afterEach(async () => {
      await service?.close();
      service = null;
    });

    const fromClients = async (env: Record<string, string>) => {
      service = await startMemoryService({
        SECKILL_ADDRESS_RATE_LIMIT_POINTS: '1',
        SECKILL_ADDRESS_RATE_LIMIT_WINDOW_SECONDS: '3600',
        ...env,
      });
      const api = new ApiClient(service.url, service.config.jwtSecret);
      const productId = await api.listProduct({ name: 'Tablet', stock: 10 });
      return Promise.all(
        ['203.0.113.7', '203.0.113.8'].map(async (client, i) =>
          api.request('POST', '/api/v1/seckill/orders', {
            token: await api.token(`proxied-${i}`),
            json: { productId, quantity: 1 },
            headers: { 'x-forwarded-for': client },
          }),
        ),
      );
    };

    it('counts each client X-Forwarded-For names when SECKILL_TRUST_PROXY trusts the proxy', async () => {
      const answers = await fromClients({ SECKILL_TRUST_PROXY: 'loopback' });
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
    });

    it('ignores X-Forwarded-For from a proxy it was not told to trust', async () => {
      const answers = await fromClients({});
      expect(answers.map((a) => a.status).sort()).toEqual([202, 429]);
    });
  });

  describe('the bound on orders in flight', () => {
    let service: SeckillService;
    let api: ApiClient;

    beforeAll(async () => {
      // each reservation waits 200 ms for its group commit: orders pile up in flight, as on a loaded process
      service = await startMemoryService({
        SECKILL_ORDERS_IN_FLIGHT_MAX: '4',
        SECKILL_GROUP_COMMIT_WAIT_MS: '200',
        SECKILL_GROUP_COMMIT_MAX: '1000',
      });
      api = new ApiClient(service.url, service.config.jwtSecret);
    });
    afterAll(() => service.close());

    it('sheds what is over the bound with 429 at once, and accepts again once the load has passed', async () => {
      const productId = await api.listProduct({ name: 'Camera', stock: 1_000, perUserLimit: 1 });
      const tokens = await Promise.all(Array.from({ length: 300 }, (_, i) => api.token(`rush-${i}`)));

      const answers = await Promise.all(
        tokens.map((token) =>
          api.request('POST', '/api/v1/seckill/orders', { token, json: { productId, quantity: 1 } }),
        ),
      );

      const shed = answers.filter((a) => a.status === 429);
      expect(shed.length).toBeGreaterThan(0);
      for (const refused of shed)
        expect(String(refused.body['detail'])).toContain('as many orders as it can');
      expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 202)).toBe(true);
      const later = await api.request('POST', '/api/v1/seckill/orders', {
        token: await api.token('after-the-rush'),
        json: { productId, quantity: 1 },
      });
      expect(later.status).toBe(202);
      await drained(service);
      await expectBooksAgree(api, [productId]);
    });
  });

  describe('budgets on the other routes', () => {
    let service: SeckillService;
    let api: ApiClient;

    beforeAll(async () => {
      service = await startMemoryService({
        SECKILL_READ_RATE_LIMIT_POINTS: '3',
        SECKILL_READ_RATE_LIMIT_WINDOW_SECONDS: '3600',
        SECKILL_WRITE_RATE_LIMIT_POINTS: '2',
        SECKILL_WRITE_RATE_LIMIT_WINDOW_SECONDS: '3600',
      });
      api = new ApiClient(service.url, service.config.jwtSecret);
    });
    afterAll(() => service.close());

    it("limits a buyer's reads of an order, and anonymous reads of a product by address", async () => {
      const productId = await api.listProduct({ name: 'Speaker', stock: 10 });
      // the first order of a product this process does not keep yet costs its buyer a read (the lookup)
      const first = await api.request('POST', '/api/v1/seckill/orders', {
        token: await api.token('first-buyer'),
        json: { productId, quantity: 1 },
      });
      expect(first.status).toBe(202);
      const token = await api.token('reader');
      const placed = await api.request('POST', '/api/v1/seckill/orders', {
        token,
        json: { productId, quantity: 1 },
      });
      const orderId = String(placed.body['orderId']);
      const reads = [];
      for (let i = 0; i < 4; i += 1)
        reads.push(await api.request('GET', `/api/v1/orders/${orderId}`, { token }));
      expect(reads.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      expect(reads[3]!.body).toMatchObject({ code: 'RATE_LIMITED' });
      // another buyer's budget is their own
      expect(
        (await api.request('GET', `/api/v1/orders/${orderId}`, { token: await api.token('other') })).status,
      ).toBe(404);

      const anonymous = [];
      for (let i = 0; i < 4; i += 1)
        anonymous.push(await api.request('GET', `/api/v1/products/${productId}`));
      expect(anonymous.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    });

    it("limits a buyer's payments and cancellations", async () => {
      const productId = await api.listProduct({ name: 'Headphones', stock: 10 });
      const token = await api.token('payer');
      const placed = await api.request('POST', '/api/v1/seckill/orders', {
        token,
        json: { productId, quantity: 1 },
      });
      const orderId = String(placed.body['orderId']);
      const tries = [];
      for (let i = 0; i < 3; i += 1)
        tries.push(await api.request('POST', `/api/v1/orders/${orderId}/cancel`, { token }));
      expect(tries.map((t) => t.status)).toEqual([200, 200, 429]);
      expect(tries[2]!.body).toMatchObject({ code: 'RATE_LIMITED' });
    });
  });
});
