import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InfrastructureUnavailable, type StockGate } from '../../src/application/index.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { drained, memoryDatabaseOf } from '../support/drained.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';

const ORDERS = '/api/v1/seckill/orders';

/**
 * The order route is taken ahead of express's router when the request is a POST to its exact path; every other
 * spelling of it still goes through express. Both must be the same route to a buyer.
 */
describe('the order route, however it is reached', () => {
  let service: SeckillService;
  let api: ApiClient;
  let productId: number;
  /** the gate fails while this is set: Redis unreachable */
  let gateDown = false;

  beforeAll(async () => {
    service = await startMemoryService(
      {},
      {
        gate: (gate: StockGate): StockGate =>
          new Proxy(gate, {
            get(target, name, receiver) {
              if (name === 'reserve' && gateDown)
                return () => Promise.reject(new InfrastructureUnavailable('redis', 'connection refused'));
              const value = Reflect.get(target, name, receiver) as unknown;
              return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
            },
          }),
      },
    );
    api = new ApiClient(service.url, service.config.jwtSecret);
    productId = await api.listProduct({ name: 'Spelled', stock: 100, perUserLimit: 1, maxPerOrder: 1 });
  });

  afterAll(async () => {
    await service.close();
  });

  it.each([
    ['its exact path', ORDERS],
    ['a query string', `${ORDERS}?from=app`],
    ['a trailing slash', `${ORDERS}/`],
    ['another case', ORDERS.toUpperCase()],
  ])('accepts an order sent to %s, with the same answer and headers', async (_name, path) => {
    const buyer = `buyer-${path.length}-${path.endsWith('/') ? 'slash' : path.at(-1)}`;
    const answer = await api.request('POST', path, {
      token: await api.token(buyer),
      json: { productId, quantity: 1 },
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ orderId: expect.any(String), status: 'RESERVED' });
    expect(answer.headers.get('location')).toBe(`/api/v1/orders/${String(answer.body['orderId'])}`);
    expect(answer.headers.get('x-request-id')).toMatch(/\S/);
    expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers bad input on its exact path with the problem naming it, and writes nothing', async () => {
    await drained(service);
    const before = memoryDatabaseOf(service).events.length;
    const answer = await api.request('POST', ORDERS, {
      token: await api.token('bad-input'),
      json: { productId, quantity: 'one' },
    });
    expect(answer.status).toBe(400);
    expect(answer.contentType).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', instance: ORDERS });
    expect(String(answer.body['detail'])).toContain('body.quantity');
    expect(memoryDatabaseOf(service).events.length).toBe(before);
  });

  it('answers a fault under the route with a 503 problem on every spelling, the request still answered', async () => {
    gateDown = true;
    try {
      for (const path of [ORDERS, `${ORDERS}/`]) {
        const answer = await api.request('POST', path, {
          token: await api.token('during-the-fault'),
          json: { productId, quantity: 1 },
        });
        expect(answer.status).toBe(503);
        expect(answer.contentType).toContain('application/problem+json');
        expect(answer.body).toMatchObject({ code: 'UNAVAILABLE', instance: path });
      }
    } finally {
      gateDown = false;
    }
    const after = await api.request('POST', ORDERS, {
      token: await api.token('during-the-fault'),
      json: { productId, quantity: 1 },
    });
    expect(after.status).toBe(202);
  });

  it('leaves other methods on its path to express: a GET is a 404 problem', async () => {
    const answer = await api.request('GET', ORDERS, { token: await api.token('reader') });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'NOT_FOUND' });
  });
});
