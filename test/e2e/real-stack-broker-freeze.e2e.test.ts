import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

describe('the real stack when the broker freezes during the flood', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    // the relay re-sends what the frozen broker never took, soon after the thaw
    stack = await createRealStack({
      SECKILL_OUTBOX_RELAY_MS: '500',
      SECKILL_OUTBOX_PENDING_GRACE_MS: '1000',
      SECKILL_OUTBOX_STALE_SENT_MS: '10000',
      SECKILL_OUTBOX_BACKOFF_MS: '200',
      SECKILL_KAFKA_REQUEST_TIMEOUT_MS: '1000',
    });
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.broker.thaw();
    await stack.stop();
  });

  it('keeps answering buyers while the broker is frozen, and decides every accepted order after the thaw', async () => {
    const productId = await api.listProduct({ name: 'Console', stock: 100, perUserLimit: 1, maxPerOrder: 1 });

    const flood = await runFlood(api, {
      productId,
      buyers: 1_500,
      concurrency: 64,
      seed: 11,
      midway: { after: 60, action: () => stack.broker.freeze() },
    });
    // every buyer got an answer while the broker was frozen: a reservation or a rejection, never a 503
    expect(flood.unexpected).toEqual([]);
    expect(flood.accepted.length).toBe(100);
    const stillReserved = (await flood.decide()).undecided;
    expect(stillReserved).toBeGreaterThan(0);

    await stack.broker.thaw();
    await drained(service, 120_000);

    const decided = await flood.decide();
    expect(decided).toEqual({ sold: 100, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    const audit = await api.request('GET', '/api/v1/admin/audit', {
      token: await api.token('auditor', 'admin'),
    });
    expect(audit.body['violations']).toEqual([]);
    expect(audit.body['ok']).toBe(true);
  });
});
