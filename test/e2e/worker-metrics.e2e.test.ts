import { afterEach, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/infrastructure/config.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { drained } from '../support/drained.js';

const startWorker = (env: Record<string, string>) => {
  const config = loadConfig({
    SECKILL_PROFILE: 'memory',
    SECKILL_HOST: '127.0.0.1',
    SECKILL_LOG_LEVEL: 'silent',
    SECKILL_DEMO_PRODUCT: 'false',
    ...env,
  });
  return SeckillService.start(config, { http: false, worker: true }, createLogger(config.logLevel));
};

describe('a worker without the API', () => {
  let worker: SeckillService | null = null;

  afterEach(async () => {
    await worker?.close();
    worker = null;
  });

  it('serves its own counters on SECKILL_METRICS_PORT, so its commits are scraped', async () => {
    worker = await startWorker({ SECKILL_METRICS_PORT: '0', SECKILL_METRICS_SAMPLE_MS: '100' });
    const product = await worker.app.products.list(
      { name: 'Lamp', stock: 3, perUserLimit: 1, maxPerOrder: 1, saleStartsAt: null, saleEndsAt: null },
      'c',
    );
    const placed = await worker.app.placeOrder.execute({
      userId: 'u1',
      productId: product.productId,
      quantity: 1,
      correlationId: 'c1',
    });
    expect(placed.ok).toBe(true);
    await drained(worker);

    expect(worker.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const scrape = async () => {
      const metrics = await fetch(`${worker!.metricsUrl}/metrics`);
      expect(metrics.status).toBe(200);
      return metrics.text();
    };
    expect(await scrape()).toMatch(/^seckill_orders_committed_total 1$/m);
    // the gauges are sampled every 100 ms here: the next reading sees the unit sold
    await eventually(async () => {
      expect(await scrape()).toMatch(
        new RegExp(`^seckill_gate_stock\\{product="${product.productId}"\\} 2$`, 'm'),
      );
    });
    expect((await fetch(`${worker.metricsUrl}/readyz`)).status).toBe(200);
    // the API is not there
    const api = await fetch(`${worker.metricsUrl}/api/v1/products/${product.productId}`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('opens no port when the setting is absent', async () => {
    worker = await startWorker({});
    expect(() => worker!.metricsUrl).toThrow(/no metrics port is open/);
  });
});
