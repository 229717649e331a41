import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, inParallel, startMemoryService } from '../support/e2e-service.js';

const READS = 20;

/** A full collection, then the heap in use. */
const heapAfterGc = (): number => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe('an order for a product this service does not know', () => {
  let service: SeckillService | null = null;
  afterEach(async () => {
    await service?.close();
    service = null;
  });

  it("is looked up only once the buyer has spent a read on it: unknown ids past the reads' budget are refused 429", async () => {
    service = await startMemoryService({
      SECKILL_READ_RATE_LIMIT_POINTS: String(READS),
      SECKILL_READ_RATE_LIMIT_WINDOW_SECONDS: '3600',
    });
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const token = await api.token('prober');
    const answers = await inParallel(
      Array.from(
        { length: 2 * READS },
        (_, i) => () =>
          api.request('POST', '/api/v1/seckill/orders', {
            token,
            json: { productId: 900_000 + i, quantity: 1 },
          }),
      ),
      4,
    );
    expect(answers.filter((a) => a.status === 404)).toHaveLength(READS);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(READS);
    for (const answer of refused) {
      expect(answer.contentType).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // another buyer still orders a product the service knows
    const productId = await api.listProduct({ name: 'Lamp', stock: 1 });
    const placed = await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token('buyer'),
      json: { productId, quantity: 1 },
    });
    expect(placed.status).toBe(202);
  });

  it('1,000,000 unknown ids from one buyer: refused once the budget is spent, the heap grows by under 5 MiB', async () => {
    service = await startMemoryService({ SECKILL_READ_RATE_LIMIT_POINTS: '50' });
    const { placeOrder } = service.app;
    const order = (productId: number) =>
      placeOrder.execute({ productId, userId: 'prober', quantity: 1, correlationId: 'probe' });
    // the code paths warmed, then the heap measured
    for (let i = 0; i < 1_000; i += 1) await order(2_000_000 + i);
    const before = heapAfterGc();
    const codes = new Map<string, number>();
    for (let i = 0; i < 1_000_000; i += 1) {
      const answer = await order(1_000_000 + i);
      const code = answer.ok ? 'ok' : answer.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    const grown = heapAfterGc() - before;
    expect(codes.get('RATE_LIMITED')).toBeGreaterThan(990_000);
    expect([...codes.keys()].sort()).toEqual(['PRODUCT_NOT_FOUND', 'RATE_LIMITED']);
    expect(grown).toBeLessThan(5 * 1024 * 1024);
  }, 120_000);
});
