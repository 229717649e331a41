import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/infrastructure/config.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { SeckillService } from '../../src/infrastructure/service.js';
import { runSimulation } from '../../src/client/simulate.js';
import { BUILT_THREADS, ONE_MACHINE } from '../support/e2e-service.js';
import { FaultyOrderProxy } from '../support/faulty-proxy.js';

const BUYERS = 500;
const STOCK = 50;
const PER_USER_LIMIT = 1;

describe('seckill simulate against the memory profile', () => {
  let service: SeckillService;

  beforeAll(async () => {
    const config = loadConfig({
      SECKILL_PROFILE: 'memory',
      PORT: '0',
      SECKILL_LOG_LEVEL: 'silent',
      SECKILL_DEMO_PRODUCT: 'false',
      SECKILL_RATE_LIMIT_POINTS: '1000',
      ...ONE_MACHINE,
    });
    service = await SeckillService.start(
      config,
      { http: true, worker: true },
      createLogger('silent'),
      BUILT_THREADS,
    );
  });

  afterAll(async () => {
    await service.close();
  });

  it('floods a fresh product through the sale path with repeat clicks and sells exactly the stock, nobody over the limit', async () => {
    const report = await runSimulation({
      url: service.url,
      secret: service.config.jwtSecret,
      buyers: BUYERS,
      stock: STOCK,
      perUserLimit: PER_USER_LIMIT,
      clicks: 2,
      connections: 32,
      quiet: true,
    });

    // every order carried a path token the buyer had just been given for it, and the product required one
    expect(report.pathToken).toBe(true);
    expect(report.answers['PATH_TOKEN_REQUIRED'] ?? 0).toBe(0);
    expect(report.answers['PATH_TOKEN_INVALID'] ?? 0).toBe(0);
    const product = (await (await fetch(`${service.url}/api/v1/products/${report.productId}`)).json()) as {
      requirePathToken: boolean;
    };
    expect(product.requirePathToken).toBe(true);
    expect(report.requests.planned).toBe(BUYERS * 2);
    expect(report.requests.answered).toBe(BUYERS * 2);
    expect(report.accepted).toBeGreaterThanOrEqual(STOCK);
    expect(report.sold).toBe(STOCK);
    expect(report.oversold).toBe(0);
    expect(report.orders.undecided).toBe(0);
    expect(report.stockLeft).toBe(0);
    expect(report.maxUnitsPerBuyer).toBeLessThanOrEqual(PER_USER_LIMIT);
    expect(report.buyersOverLimit).toBe(0);
    expect(report.audit).toMatchObject({ ok: true, violations: 0 });
    expect(report.requests.latencyMs.p99).toBeGreaterThanOrEqual(report.requests.latencyMs.p50);
    expect(report.ok).toBe(true);
  });

  it('says clearly when no service answers', async () => {
    await expect(
      runSimulation({
        url: 'http://127.0.0.1:1',
        secret: service.config.jwtSecret,
        buyers: 1,
        stock: 1,
        perUserLimit: 1,
        clicks: 1,
        connections: 1,
        quiet: true,
      }),
    ).rejects.toThrow(/no seckill service answers at http:\/\/127\.0\.0\.1:1/);
  });
  it('retries by Idempotency-Key the orders whose answer was a 503 or never came, and still sells exactly the stock', async () => {
    const proxy = await new FaultyOrderProxy(service.url).start();
    try {
      const report = await runSimulation({
        url: proxy.url,
        secret: service.config.jwtSecret,
        buyers: 300,
        stock: 30,
        perUserLimit: 1,
        clicks: 2,
        connections: 16,
        quiet: true,
      });

      expect(proxy.troubled.refused).toBeGreaterThan(0);
      expect(proxy.troubled.dropped).toBeGreaterThan(0);
      // each troubled click was sent again with its key and answered: none is left at 503 or unanswered
      expect(report.requests.retried).toEqual({
        sent: proxy.troubled.refused + proxy.troubled.dropped,
        answered: proxy.troubled.refused + proxy.troubled.dropped,
      });
      expect(report.requests.answered).toBe(600);
      expect(report.answers['UNAVAILABLE'] ?? 0).toBe(0);
      // a retry whose first try used its path token up is answered from its key, not refused for the token
      expect(report.answers['PATH_TOKEN_INVALID'] ?? 0).toBe(0);
      expect(report.sold).toBe(30);
      expect(report.oversold).toBe(0);
      expect(report.buyersOverLimit).toBe(0);
      expect(report.audit).toMatchObject({ ok: true, violations: 0 });
      expect(report.ok).toBe(true);
    } finally {
      await proxy.stop();
    }
  });
});
