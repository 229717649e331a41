import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, UnsecuredJWT } from 'jose';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, type Answer, startMemoryService } from '../support/e2e-service.js';
import { drained, memoryDatabaseOf } from '../support/drained.js';

type Case = Readonly<{
  name: string;
  status: number;
  code: string;
  field?: string;
  send: () => Promise<Answer>;
}>;

describe('bad input over HTTP', () => {
  let service: SeckillService;
  let api: ApiClient;
  let productId: number;
  let closedProductId: number;
  let ordersOfAlice: string;
  let user: string;
  let admin: string;

  const snapshot = async () => {
    const db = memoryDatabaseOf(service);
    const { gate } = service.app.ports;
    return JSON.stringify({
      events: db.events,
      orders: [...db.orders.values()],
      outbox: [...db.outbox.values()],
      products: [...db.products.values()],
      gate: [await gate.stockLeft(productId), await gate.stockLeft(closedProductId)],
    });
  };

  beforeAll(async () => {
    service = await startMemoryService({
      SECKILL_RATE_LIMIT_POINTS: '1000',
      SECKILL_JWT_ISSUER: ISSUER,
      SECKILL_JWT_AUDIENCE: AUDIENCE,
    });
    api = new ApiClient(service.url, service.config.jwtSecret, service.config.tokenPolicy);
    productId = await api.listProduct({ name: 'Console', stock: 10, perUserLimit: 2, maxPerOrder: 1 });
    closedProductId = await api.listProduct({
      name: 'Next year',
      stock: 10,
      saleStartsAt: '2099-01-01T00:00:00Z',
    });
    user = await api.token('bob');
    admin = await api.token('root', 'admin');
    const placed = await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token('alice'),
      json: { productId, quantity: 1 },
    });
    ordersOfAlice = String(placed.body['orderId']);
    await drained(service);
  });

  afterAll(async () => {
    await service.close();
  });

  const order =
    (json: unknown, token: string = user) =>
    () =>
      api.request('POST', '/api/v1/seckill/orders', { token, json });
  const raw = (body: string, contentType: string) => () =>
    api.request('POST', '/api/v1/seckill/orders', {
      token: user,
      body,
      headers: { 'content-type': contentType },
    });

  const cases = (): Case[] => [
    {
      name: 'no token',
      status: 401,
      code: 'MISSING_TOKEN',
      send: () => api.request('POST', '/api/v1/seckill/orders', { json: { productId, quantity: 1 } }),
    },
    {
      name: 'not a bearer token',
      status: 401,
      code: 'INVALID_TOKEN',
      send: () =>
        api.request('POST', '/api/v1/seckill/orders', {
          json: { productId, quantity: 1 },
          headers: { authorization: 'Basic Ym9iOnB3' },
        }),
    },
    {
      name: 'forged token',
      status: 401,
      code: 'INVALID_TOKEN',
      send: async () =>
        order(
          { productId, quantity: 1 },
          await new ApiClient(api.baseUrl, 'x'.repeat(40), service.config.tokenPolicy).token('bob'),
        )(),
    },
    ...tokenCases().map(([name, code, claims]): Case => ({
      name,
      status: 401,
      code,
      send: async () =>
        order({ productId, quantity: 1 }, await tokenWith(service.config.jwtSecret, claims))(),
    })),
    {
      name: 'an unsigned token (alg none) of an admin',
      status: 401,
      code: 'INVALID_TOKEN',
      send: () =>
        api.request('GET', '/api/v1/admin/audit', {
          token: new UnsecuredJWT({ role: 'admin', iss: ISSUER, aud: AUDIENCE })
            .setSubject('root')
            .setIssuedAt()
            .setExpirationTime('1h')
            .encode(),
        }),
    },
    {
      name: 'an admin token that lives until year 33,000, on an admin route',
      status: 401,
      code: 'INVALID_TOKEN',
      send: async () =>
        api.request('GET', '/api/v1/admin/audit', {
          token: await tokenWith(service.config.jwtSecret, { sub: 'root', role: 'admin', exp: YEAR_33000 }),
        }),
    },
    {
      name: 'malformed JSON',
      status: 400,
      code: 'MALFORMED_JSON',
      send: raw('{"productId": 1,', 'application/json'),
    },
    {
      name: 'a JSON string instead of an object',
      status: 400,
      code: 'MALFORMED_JSON',
      send: raw('"buy"', 'application/json'),
    },
    {
      name: 'form encoding',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      send: raw('productId=1&quantity=1', 'application/x-www-form-urlencoded'),
    },
    {
      name: 'a latin-1 charset',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      send: raw('{"productId":1,"quantity":1}', 'application/json; charset=latin1'),
    },
    {
      name: 'a body over 16 KiB',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      send: order({ productId, quantity: 1, pad: 'x'.repeat(20_000) }),
    },
    {
      name: 'an array body',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body',
      send: order([{ productId, quantity: 1 }]),
    },
    {
      name: 'productId missing',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.productId',
      send: order({ quantity: 1 }),
    },
    {
      name: 'productId as a string',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.productId',
      send: order({ productId: String(productId), quantity: 1 }),
    },
    {
      name: 'productId zero',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.productId',
      send: order({ productId: 0, quantity: 1 }),
    },
    {
      name: 'productId fractional',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.productId',
      send: order({ productId: 1.5, quantity: 1 }),
    },
    {
      name: 'productId huge',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.productId',
      send: order({ productId: 1e20, quantity: 1 }),
    },
    {
      name: 'quantity zero',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.quantity',
      send: order({ productId, quantity: 0 }),
    },
    {
      name: 'quantity negative',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.quantity',
      send: order({ productId, quantity: -3 }),
    },
    {
      name: 'quantity null',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.quantity',
      send: order({ productId, quantity: null }),
    },
    {
      name: 'a user id in the body',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.userId',
      send: order({ productId, quantity: 1, userId: 'alice' }),
    },
    {
      name: 'a __proto__ key',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.__proto__',
      send: raw(`{"productId":${productId},"quantity":1,"__proto__":{"admin":true}}`, 'application/json'),
    },
    {
      name: 'an unknown product',
      status: 404,
      code: 'PRODUCT_NOT_FOUND',
      send: order({ productId: 999_999, quantity: 1 }),
    },
    {
      name: 'more than the maximum per order',
      status: 409,
      code: 'LIMIT_EXCEEDED',
      send: order({ productId, quantity: 2 }),
    },
    {
      name: 'a sale that has not started',
      status: 409,
      code: 'SALE_NOT_ACTIVE',
      send: order({ productId: closedProductId, quantity: 1 }),
    },
    {
      name: 'an order id that is not a UUID',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'orderId',
      send: () => api.request('GET', '/api/v1/orders/..%2F..%2Fadmin', { token: user }),
    },
    {
      name: "another user's order",
      status: 404,
      code: 'ORDER_NOT_FOUND',
      send: () => api.request('GET', `/api/v1/orders/${ordersOfAlice}`, { token: user }),
    },
    {
      name: "paying another user's order",
      status: 404,
      code: 'ORDER_NOT_FOUND',
      send: () => api.request('POST', `/api/v1/orders/${ordersOfAlice}/payment`, { token: user }),
    },
    {
      name: "cancelling another user's order",
      status: 404,
      code: 'ORDER_NOT_FOUND',
      send: () => api.request('POST', `/api/v1/orders/${ordersOfAlice}/cancel`, { token: user }),
    },
    {
      name: 'an unknown order',
      status: 404,
      code: 'ORDER_NOT_FOUND',
      send: () => api.request('GET', '/api/v1/orders/00000000-0000-4000-8000-000000000000', { token: user }),
    },
    {
      name: 'a product id that is not a number',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'productId',
      send: () => api.request('GET', '/api/v1/products/abc'),
    },
    {
      name: 'an unknown product page',
      status: 404,
      code: 'PRODUCT_NOT_FOUND',
      send: () => api.request('GET', '/api/v1/products/424242'),
    },
    {
      name: 'listing a product with a user token',
      status: 403,
      code: 'FORBIDDEN',
      send: () =>
        api.request('POST', '/api/v1/admin/products', { token: user, json: { name: 'x', stock: 1 } }),
    },
    {
      name: 'listing with negative stock',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.stock',
      send: () =>
        api.request('POST', '/api/v1/admin/products', { token: admin, json: { name: 'x', stock: -1 } }),
    },
    {
      name: 'listing with a blank name',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.name',
      send: () =>
        api.request('POST', '/api/v1/admin/products', { token: admin, json: { name: '   ', stock: 1 } }),
    },
    {
      name: 'listing with maxPerOrder over perUserLimit',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.maxPerOrder',
      send: () =>
        api.request('POST', '/api/v1/admin/products', {
          token: admin,
          json: { name: 'x', stock: 1, perUserLimit: 1, maxPerOrder: 3 },
        }),
    },
    {
      name: 'listing with a window that ends before it starts',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.saleEndsAt',
      send: () =>
        api.request('POST', '/api/v1/admin/products', {
          token: admin,
          json: {
            name: 'x',
            stock: 1,
            saleStartsAt: '2030-01-02T00:00:00Z',
            saleEndsAt: '2030-01-01T00:00:00Z',
          },
        }),
    },
    {
      name: 'listing with a date that is not ISO',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.saleStartsAt',
      send: () =>
        api.request('POST', '/api/v1/admin/products', {
          token: admin,
          json: { name: 'x', stock: 1, saleStartsAt: 'tomorrow' },
        }),
    },
    {
      name: 'restocking zero',
      status: 400,
      code: 'VALIDATION_FAILED',
      field: 'body.quantity',
      send: () =>
        api.request('POST', `/api/v1/admin/products/${productId}/stock`, {
          token: admin,
          json: { quantity: 0 },
        }),
    },
    {
      name: 'restocking an unknown product',
      status: 404,
      code: 'PRODUCT_NOT_FOUND',
      send: () =>
        api.request('POST', '/api/v1/admin/products/777777/stock', { token: admin, json: { quantity: 5 } }),
    },
    {
      name: 'the audit with a user token',
      status: 403,
      code: 'FORBIDDEN',
      send: () => api.request('GET', '/api/v1/admin/audit', { token: user }),
    },
    {
      name: 'an unknown route',
      status: 404,
      code: 'NOT_FOUND',
      send: () => api.request('DELETE', '/api/v1/seckill/orders', { token: user }),
    },
  ];

  it('answers every bad request with a 4xx problem+json that names the problem, and writes nothing', async () => {
    for (const c of cases()) {
      const before = await snapshot();
      const answer = await c.send();
      expect({ case: c.name, status: answer.status, code: answer.body['code'] }).toEqual({
        case: c.name,
        status: c.status,
        code: c.code,
      });
      expect(answer.contentType).toContain('application/problem+json');
      expect(answer.body['detail']).toEqual(expect.any(String));
      if (c.field) {
        const fields = (answer.body['errors'] as Array<{ field: string }>).map((e) => e.field);
        expect({ case: c.name, fields }).toEqual({ case: c.name, fields: expect.arrayContaining([c.field]) });
      }
      await drained(service);
      expect({ case: c.name, state: await snapshot() }).toEqual({ case: c.name, state: before });
    }
  });

  it('refuses to pay an order that is not COMMITTED (here: cancelled), and changes nothing', async () => {
    const alice = await api.token('alice');
    await drained(service);
    const cancelled = await api.request('POST', `/api/v1/orders/${ordersOfAlice}/cancel`, { token: alice });
    expect(cancelled.body['status']).toBe('RELEASED');
    await drained(service);
    const before = await snapshot();
    const paid = await api.request('POST', `/api/v1/orders/${ordersOfAlice}/payment`, { token: alice });
    expect(paid.status).toBe(409);
    expect(paid.body['code']).toBe('ORDER_NOT_COMMITTED');
    expect(await snapshot()).toEqual(before);
  });
});

const ISSUER = 'https://auth.seckill.test';
const AUDIENCE = 'seckill-api';
/** 1 January 33,000, in seconds */
const YEAR_33000 = 979_212_240_000;

const now = (): number => Math.floor(Date.now() / 1000);

/** A token of bob's that the service accepts, with these claims changed (undefined: left out). */
const tokenWith = (secret: string, claims: Record<string, unknown>) =>
  new SignJWT({
    sub: 'bob',
    role: 'user',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: now(),
    exp: now() + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));

/** Tokens with one thing wrong each, signed with the service's secret: what is wrong, the code, the claims. */
const tokenCases = (): Array<[string, string, Record<string, unknown>]> => [
  ['an expired token', 'TOKEN_EXPIRED', { iat: now() - 7200, exp: now() - 3600 }],
  ['a token with an unknown role', 'INVALID_TOKEN', { role: 'root' }],
  ['a token that lives until year 33,000', 'INVALID_TOKEN', { exp: YEAR_33000 }],
  ['a token without iat that lives until year 33,000', 'INVALID_TOKEN', { iat: undefined, exp: YEAR_33000 }],
  ['a token that lives a day and a second', 'INVALID_TOKEN', { iat: now(), exp: now() + 86_401 }],
  ['a token issued in an hour', 'INVALID_TOKEN', { iat: now() + 3600, exp: now() + 4200 }],
  ['a token of another issuer', 'INVALID_TOKEN', { iss: 'https://evil.example' }],
  ['a token without an issuer', 'INVALID_TOKEN', { iss: undefined }],
  ['a token for another audience', 'INVALID_TOKEN', { aud: 'another-service' }],
  ['a token without an audience', 'INVALID_TOKEN', { aud: undefined }],
];
