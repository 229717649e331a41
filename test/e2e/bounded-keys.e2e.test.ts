import { afterEach, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';

describe("a buyer's Idempotency-Keys on the memory profile, over HTTP", () => {
  let service: SeckillService | null = null;
  afterEach(async () => {
    await service?.close();
    service = null;
  });

  const start = async (env: Record<string, string>) => {
    service = await startMemoryService(env);
    return new ApiClient(service.url, service.config.jwtSecret);
  };
  const order = async (api: ApiClient, userId: string, productId: number, key: string, pathToken?: string) =>
    api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token(userId),
      headers: { 'idempotency-key': key },
      json: { productId, quantity: 1, ...(pathToken === undefined ? {} : { pathToken }) },
    });

  it('a key sent with an order refused by a budget is not claimed: once the window has room, it orders', async () => {
    const api = await start({ SECKILL_RATE_LIMIT_POINTS: '1', SECKILL_RATE_LIMIT_WINDOW_SECONDS: '1' });
    const productId = await api.listProduct({ name: 'Watch', stock: 5, perUserLimit: 5 });
    expect((await order(api, 'alice', productId, 'first-click')).status).toBe(202);
    const refused = await order(api, 'alice', productId, 'second-click');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
    await eventually(
      async () => {
        const later = await order(api, 'alice', productId, 'second-click');
        expect(later.status).toBe(202);
        expect(later.body).toMatchObject({ status: 'RESERVED' });
      },
      5_000,
      100,
    );
  });

  it('a key sent with an order refused for its path token is not claimed: with a good token, it orders', async () => {
    const api = await start({});
    const productId = await api.listProduct({ name: 'Sneakers', stock: 5, requirePathToken: true });
    const refused = await order(api, 'alice', productId, 'click', 'not-a-token-of-ours');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'PATH_TOKEN_INVALID' });
    const path = await api.request('POST', `/api/v1/seckill/products/${productId}/path`, {
      token: await api.token('alice'),
    });
    const placed = await order(api, 'alice', productId, 'click', String(path.body['pathToken']));
    expect(placed.status).toBe(202);
  });

  it('one buyer holds at most SECKILL_IDEMPOTENCY_KEYS_MAX live keys on a product; past it 429, repeats still answered', async () => {
    const api = await start({ SECKILL_IDEMPOTENCY_KEYS_MAX: '5', SECKILL_RATE_LIMIT_POINTS: '1000' });
    const productId = await api.listProduct({ name: 'Camera', stock: 50, perUserLimit: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await order(api, 'mallory', productId, `key-${i}`)).status);
    // one reservation, then four refusals over the limit, each kept under its key
    expect(statuses).toEqual([202, 409, 409, 409, 409]);
    const past = await order(api, 'mallory', productId, 'key-5');
    expect(past.status).toBe(429);
    expect(past.contentType).toContain('application/problem+json');
    expect(past.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(String(past.body['detail'])).toContain('Idempotency-Key');
    expect(Number(past.headers.get('retry-after'))).toBeGreaterThan(3_600);
    // the first key still answers its order; another buyer is not held back
    const repeat = await order(api, 'mallory', productId, 'key-0');
    expect(repeat.status).toBe(202);
    expect((await order(api, 'trent', productId, 'key-5')).status).toBe(202);
  });
});
