import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { TestClock } from '../support/app-doubles.js';
import { expectBooksAgree } from '../support/books.js';
import { drained } from '../support/drained.js';
import { type Answer, ApiClient, startMemoryService } from '../support/e2e-service.js';

const TTL_MS = 30_000;

describe('sale path tokens on the memory profile, over HTTP', () => {
  let service: SeckillService;
  let api: ApiClient;
  const clock = new TestClock(new Date().toISOString());

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_PATH_TOKEN_TTL_MS: String(TTL_MS) }, { clock: () => clock });
    api = new ApiClient(service.url, service.config.jwtSecret);
  });
  afterAll(() => service.close());

  const askPath = async (userId: string, productId: number): Promise<Answer> =>
    api.request('POST', `/api/v1/seckill/products/${productId}/path`, { token: await api.token(userId) });
  const pathOf = async (userId: string, productId: number): Promise<string> => {
    const answer = await askPath(userId, productId);
    expect(answer.status).toBe(200);
    return String(answer.body['pathToken']);
  };
  const order = async (userId: string, productId: number, pathToken?: string) =>
    api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token(userId),
      json: { productId, quantity: 1, ...(pathToken === undefined ? {} : { pathToken }) },
    });
  /** What the service holds: the events it replayed and the product's stock left. */
  const books = async (productId: number) => {
    const audit = await api.request('GET', '/api/v1/admin/audit', { token: await api.token('ops', 'admin') });
    const product = await api.request('GET', `/api/v1/products/${productId}`);
    return { events: audit.body['eventsReplayed'], stockLeft: product.body['stockLeft'] };
  };

  it('gives no token before the sale window opens, and one once it has', async () => {
    const opensAt = new Date(Date.parse(clock.now()) + 60_000).toISOString();
    const productId = await api.listProduct({
      name: 'Limited sneakers',
      stock: 5,
      saleStartsAt: opensAt,
      requirePathToken: true,
    });

    const early = await askPath('alice', productId);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: 'SALE_NOT_ACTIVE' });
    clock.set(opensAt);
    const open = await askPath('alice', productId);
    expect(open.status).toBe(200);
    expect(open.body['pathToken']).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    expect(Date.parse(String(open.body['expiresAt']))).toBe(Date.parse(opensAt) + TTL_MS);
    expect((await askPath('alice', 999_999)).status).toBe(404);
  });

  it("takes the order with the buyer's own token, once", async () => {
    const productId = await api.listProduct({ name: 'Watch', stock: 5, requirePathToken: true });
    const product = await api.request('GET', `/api/v1/products/${productId}`);
    expect(product.body['requirePathToken']).toBe(true);
    const token = await pathOf('alice', productId);

    expect((await order('alice', productId, token)).status).toBe(202);
    await drained(service);
    const before = await books(productId);
    const reused = await order('alice', productId, token);
    expect(reused.status).toBe(403);
    expect(reused.body).toMatchObject({ code: 'PATH_TOKEN_INVALID' });
    expect(await books(productId)).toEqual(before);
  });

  it("refuses an order without a token, with another buyer's, an expired or a forged one, and writes nothing", async () => {
    const productId = await api.listProduct({ name: 'Jacket', stock: 5, requirePathToken: true });
    const bobs = await pathOf('bob', productId);
    const expiring = await pathOf('carol', productId);
    clock.advance(TTL_MS);
    const before = await books(productId);

    const refusals = [
      await order('alice', productId),
      await order('alice', productId, bobs),
      await order('carol', productId, expiring),
      await order('alice', productId, 'A'.repeat(22)),
    ];

    expect(refusals.map((r) => [r.status, r.body['code']])).toEqual([
      [403, 'PATH_TOKEN_REQUIRED'],
      [403, 'PATH_TOKEN_INVALID'],
      [403, 'PATH_TOKEN_INVALID'],
      [403, 'PATH_TOKEN_INVALID'],
    ]);
    for (const r of refusals) expect(r.contentType).toContain('application/problem+json');
    // a path token refusal never says the token was issued to another buyer: bob's reads as a forged one
    expect(refusals[1]!.body['detail']).toBe(refusals[3]!.body['detail']);
    expect(String(refusals[1]!.body['detail'])).not.toContain('another buyer');
    expect(await books(productId)).toEqual(before);
    // bob's token was not spent by alice's try: it is still his, until it expires
    clock.advance(-TTL_MS);
    expect((await order('bob', productId, bobs)).status).toBe(202);
    await drained(service);
    await expectBooksAgree(api, [productId]);
  });

  it('answers a malformed token as bad input', async () => {
    const productId = await api.listProduct({ name: 'Scarf', stock: 5, requirePathToken: true });
    const answer = await order('alice', productId, 'not a token!');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
