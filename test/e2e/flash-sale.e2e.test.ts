import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { drained } from '../support/drained.js';

const STOCK = 200;
/** 5,000 buyers over HTTP: about 15 s alone, several times that beside the scale tier on two cores */
const FLOOD_TEST_MS = 180_000;
const PER_USER_LIMIT = 2;

describe('flash sale on the memory profile, over HTTP', () => {
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_RATE_LIMIT_POINTS: '100' });
    api = new ApiClient(service.url, service.config.jwtSecret);
  });

  afterAll(async () => {
    await service.close();
  });

  it(
    'sells exactly the stock to 5,000 buyers clicking repeatedly, with nobody over the limit and a clean audit',
    async () => {
      const productId = await api.listProduct({
        name: 'Flagship phone',
        stock: STOCK,
        perUserLimit: PER_USER_LIMIT,
        maxPerOrder: 1,
      });
      // every buyer clicks once; every third clicks three times more (double clicks and retries)
      const flood = await runFlood(api, { productId, buyers: 5_000, concurrency: 128, seed: 42 });
      expect(flood.unexpected).toEqual([]);
      expect(flood.codes.get('SOLD_OUT')).toBeGreaterThan(0);
      for (const { answer } of flood.answers)
        if (answer.status !== 202) expect(answer.contentType).toContain('application/problem+json');

      await drained(service);

      const decided = await flood.decide();
      expect(decided.sold).toBe(STOCK);
      expect(decided.undecided).toBe(0);
      expect(decided.maxUnitsPerBuyer).toBeLessThanOrEqual(PER_USER_LIMIT);
      const product = await api.request('GET', `/api/v1/products/${productId}`);
      expect(product.body['stockLeft']).toBe(0);
      const report = await expectBooksAgree(api, [productId]);
      expect(report.products.find((p) => p.productId === productId)).toMatchObject({
        listed: STOCK,
        sold: STOCK,
        mysqlStock: 0,
        gateStock: 0,
      });
    },
    FLOOD_TEST_MS,
  );
});
