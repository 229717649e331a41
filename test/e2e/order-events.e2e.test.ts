import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { openEventStream } from '../support/sse.js';

describe('a buyer watches their order decide (server-sent events, memory profile)', () => {
  let service: SeckillService;
  let api: ApiClient;
  let productId: number;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_ORDER_EVENTS_POLL_MS: '20' });
    api = new ApiClient(service.url, service.config.jwtSecret);
    productId = await api.listProduct({ name: 'Headphones', stock: 5, perUserLimit: 1, maxPerOrder: 1 });
  });

  afterAll(async () => {
    await service.close();
  });

  const placeOrder = async (buyer: string): Promise<string> => {
    const answer = await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token(buyer),
      json: { productId, quantity: 1 },
    });
    expect(answer.status).toBe(202);
    return answer.body['orderId'] as string;
  };
  const eventsUrl = (orderId: string) => `${service.url}/api/v1/orders/${orderId}/events`;

  it('streams the order as it stands, then each change, and ends once it is paid', async () => {
    const orderId = await placeOrder('ada');
    const token = await api.token('ada');
    const stream = await openEventStream(eventsUrl(orderId), token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain('text/event-stream');
    const seen = [await stream.next()];
    if (seen[0]?.data['status'] === 'RESERVED') seen.push(await stream.next());
    expect(seen.at(-1)).toEqual({
      event: 'status',
      data: { orderId, productId, quantity: 1, status: 'COMMITTED' },
    });

    const paid = await api.request('POST', `/api/v1/orders/${orderId}/payment`, { token });
    expect(paid.status).toBe(200);

    expect(await stream.next()).toEqual({
      event: 'status',
      data: { orderId, productId, quantity: 1, status: 'PAID' },
    });
    expect(await stream.next()).toBeNull();
  });

  it("answers another buyer's order, or an unknown one, with a 404 problem and no stream", async () => {
    const orderId = await placeOrder('bob');
    for (const [who, id] of [
      ['eve', orderId],
      ['bob', randomUUID()],
    ] as const) {
      const stream = await openEventStream(eventsUrl(id), await api.token(who));
      expect({ who, status: stream.status, type: stream.contentType }).toEqual({
        who,
        status: 404,
        type: expect.stringContaining('application/problem+json'),
      });
      stream.close();
    }
  });

  it('stops reading the projection when the buyer goes away', async () => {
    const orderId = await placeOrder('cy');
    const token = await api.token('cy');
    await eventually(async () => {
      const view = await api.request('GET', `/api/v1/orders/${orderId}`, { token });
      expect(view.body['status']).toBe('COMMITTED');
    });
    const stream = await openEventStream(eventsUrl(orderId), token);
    expect((await stream.next())?.data['status']).toBe('COMMITTED');
    stream.close();
    // the buyer's cancel still goes through, and a new watch sees it at once
    const cancelled = await api.request('POST', `/api/v1/orders/${orderId}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    const again = await openEventStream(eventsUrl(orderId), token);
    expect((await again.next())?.data).toMatchObject({ status: 'RELEASED', reason: 'CANCELLED' });
    expect(await again.next()).toBeNull();
  });
});
