import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, inParallel, startMemoryService } from '../support/e2e-service.js';

const BUYERS = 5_000;
const STOCK = 200;
const PER_USER_LIMIT = 2;

/** A deterministic shuffle, so that a failure can be replayed. */
const shuffled = <T>(items: T[], seed: number): T[] => {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
};

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

  it('sells exactly the stock to 5,000 buyers clicking repeatedly, with nobody over the limit and a clean audit', async () => {
    const productId = await api.listProduct({
      name: 'Flagship phone',
      stock: STOCK,
      perUserLimit: PER_USER_LIMIT,
      maxPerOrder: 1,
    });
    const tokens = await Promise.all(Array.from({ length: BUYERS }, (_, i) => api.token(`buyer-${i}`)));

    // Every buyer clicks once; every third clicks three times more (double clicks and retries).
    const clicks: number[] = [];
    tokens.forEach((_, buyer) => {
      for (let c = 0; c < (buyer % 3 === 0 ? 4 : 1); c++) clicks.push(buyer);
    });
    const answers = await inParallel(
      shuffled(clicks, 42).map((buyer) => async () => {
        const answer = await api.request('POST', '/api/v1/seckill/orders', {
          token: tokens[buyer]!,
          json: { productId, quantity: 1 },
        });
        return { buyer, answer };
      }),
      128,
    );

    const codes = new Map<string, number>();
    for (const { answer } of answers) {
      const code = answer.status === 202 ? 'ACCEPTED' : String(answer.body['code']);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect([...codes.keys()].sort()).toEqual(expect.arrayContaining(['ACCEPTED', 'SOLD_OUT']));
    for (const code of codes.keys())
      expect(['ACCEPTED', 'SOLD_OUT', 'LIMIT_EXCEEDED', 'DUPLICATE_REQUEST']).toContain(code);
    for (const { answer } of answers)
      if (answer.status !== 202) expect(answer.contentType).toContain('application/problem+json');

    await service.drained();

    const accepted = answers.filter(({ answer }) => answer.status === 202);
    const decided = await inParallel(
      accepted.map(({ buyer, answer }) => async () => {
        const order = await api.request('GET', `/api/v1/orders/${String(answer.body['orderId'])}`, {
          token: tokens[buyer]!,
        });
        return { buyer, order: order.body };
      }),
      64,
    );
    const unitsByBuyer = new Map<number, number>();
    let sold = 0;
    for (const { buyer, order } of decided) {
      expect(['COMMITTED', 'RELEASED']).toContain(order['status']);
      if (order['status'] === 'COMMITTED') {
        sold += order['quantity'] as number;
        unitsByBuyer.set(buyer, (unitsByBuyer.get(buyer) ?? 0) + (order['quantity'] as number));
      }
    }
    expect(sold).toBe(STOCK);
    expect(Math.max(...unitsByBuyer.values())).toBeLessThanOrEqual(PER_USER_LIMIT);

    const product = await api.request('GET', `/api/v1/products/${productId}`);
    expect(product.body['stockLeft']).toBe(0);

    const audit = await api.request('GET', '/api/v1/admin/audit', {
      token: await api.token('auditor', 'admin'),
    });
    expect(audit.body['violations']).toEqual([]);
    expect(audit.body['ok']).toBe(true);
    const line = (audit.body['products'] as Array<Record<string, unknown>>).find(
      (p) => p['productId'] === productId,
    );
    expect(line).toMatchObject({ listed: STOCK, sold: STOCK, mysqlStock: 0, gateStock: 0, undecided: 0 });
  });
});
