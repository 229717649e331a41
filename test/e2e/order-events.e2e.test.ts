import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, inParallel, startMemoryService } from '../support/e2e-service.js';
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

describe('order streams are bounded (memory profile)', () => {
  let service: SeckillService | null = null;
  afterEach(async () => {
    await service?.close();
    service = null;
  });

  const start = async (env: Record<string, string>) => {
    service = await startMemoryService({
      SECKILL_ORDER_EVENTS_POLL_MS: '20',
      SECKILL_READ_RATE_LIMIT_POINTS: '100000',
      ...env,
    });
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const productId = await api.listProduct({ name: 'Tickets', stock: 10_000, perUserLimit: 1 });
    const order = async (buyer: string) => {
      const answer = await api.request('POST', '/api/v1/seckill/orders', {
        token: await api.token(buyer),
        json: { productId, quantity: 1 },
      });
      return String(answer.body['orderId']);
    };
    return { api, order, url: service.url };
  };

  it('one buyer opening 10,000 streams on one order: all but the per-buyer cap refused with 429, and the held ones still stream', async () => {
    const { api, order, url } = await start({});
    const orderId = await order('hoarder');
    const token = await api.token('hoarder');
    const held = [];
    for (let i = 0; i < 3; i += 1)
      held.push(await openEventStream(`${url}/api/v1/orders/${orderId}/events`, token));
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const statuses = new Map<number, number>();
    const answers = await inParallel(
      Array.from({ length: 10_000 - 3 }, () => async () => {
        const response = await fetch(`${url}/api/v1/orders/${orderId}/events`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const body = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        return { response, body };
      }),
      32,
    );
    expect(Object.fromEntries(statuses)).toEqual({ 429: 10_000 - 3 });
    const refused = answers[0]!;
    expect(refused.response.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    // the streams held are alive: each tells the order as it stands
    for (const stream of held) expect((await stream.next())?.data).toMatchObject({ orderId });
    // another buyer is not held back by the hoarder
    const other = await order('someone-else');
    const theirs = await openEventStream(
      `${url}/api/v1/orders/${other}/events`,
      await api.token('someone-else'),
    );
    expect(theirs.status).toBe(200);
    // a stream closed gives its place back
    held[0]!.close();
    await eventually(async () => {
      const again = await openEventStream(`${url}/api/v1/orders/${orderId}/events`, token);
      expect(again.status).toBe(200);
      again.close();
    });
    for (const stream of [...held, theirs]) stream.close();
  }, 120_000);

  it('past the per-process bound a stream is refused with 429, whoever asks', async () => {
    const { api, order, url } = await start({ SECKILL_ORDER_EVENTS_MAX: '4' });
    const streams = [];
    for (let i = 0; i < 4; i += 1) {
      const buyer = `buyer-${i}`;
      streams.push(
        await openEventStream(`${url}/api/v1/orders/${await order(buyer)}/events`, await api.token(buyer)),
      );
    }
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200]);
    const late = await openEventStream(
      `${url}/api/v1/orders/${await order('late')}/events`,
      await api.token('late'),
    );
    expect(late.status).toBe(429);
    for (const stream of [...streams, late]) stream.close();
  });

  it('ends a stream a grace after its order is committed, and one whose lifetime is over', async () => {
    const { api, order, url } = await start({ SECKILL_ORDER_EVENTS_GRACE_MS: '300' });
    const orderId = await order('patient');
    const token = await api.token('patient');
    await eventually(async () => {
      const view = await api.request('GET', `/api/v1/orders/${orderId}`, { token });
      expect(view.body['status']).toBe('COMMITTED');
    });
    const stream = await openEventStream(`${url}/api/v1/orders/${orderId}/events`, token);
    expect((await stream.next())?.data['status']).toBe('COMMITTED');
    // nobody pays: the stream ends by itself
    expect(await stream.next()).toBeNull();
  });
});
