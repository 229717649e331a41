import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { launchChromium } from '../support/dashboard-browser.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';

/**
 * In the page: opens `url` with EventSource and resolves with the statuses seen once the order is decided,
 * or with the error the stream ended on.
 */
const FOLLOW = `(url) => new Promise((resolve) => {
  const seen = [];
  const source = new EventSource(url);
  source.addEventListener('status', (event) => {
    const order = JSON.parse(event.data);
    seen.push(order.status);
    if (order.status === 'COMMITTED' || order.status === 'RELEASED') {
      source.close();
      resolve({ seen, decided: order });
    }
  });
  source.onerror = () => {
    source.close();
    resolve({ seen, error: 'the stream failed' });
  };
})`;

type Followed = Readonly<{ seen: string[]; decided?: Record<string, unknown>; error?: string }>;

describe("a buyer's browser follows its order with EventSource and a stream ticket (memory profile)", () => {
  let service: SeckillService;
  let api: ApiClient;
  let browser: Browser;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_ORDER_EVENTS_POLL_MS: '20' });
    api = new ApiClient(service.url, service.config.jwtSecret);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser.close();
    await service.close();
  });

  it('opens the ticket URL in Chromium, sees the decision, and the ticket does not open a second stream', async () => {
    const productId = await api.listProduct({ name: 'Bicycle', stock: 3, perUserLimit: 1 });
    const token = await api.token('ada');
    const placed = await api.request('POST', '/api/v1/seckill/orders', {
      token,
      json: { productId, quantity: 1 },
    });
    expect(placed.status).toBe(202);
    const orderId = String(placed.body['orderId']);

    const ticket = await api.request('POST', `/api/v1/orders/${orderId}/stream-ticket`, { token });
    expect(ticket.status).toBe(201);
    const url = String(ticket.body['url']);
    expect(url).toMatch(new RegExp(`^/api/v1/orders/${orderId}/events\\?ticket=[A-Za-z0-9_-]{22}$`));
    expect(Date.parse(String(ticket.body['expiresAt']))).toBeGreaterThan(Date.now());

    // a page of the service itself: the stream is same-origin, as on the buyer's page
    const page = await browser.newPage();
    await page.goto(`${service.url}/dashboard`);
    const followed = await page.evaluate<Followed>(`(${FOLLOW})(${JSON.stringify(url)})`);
    expect(followed.error).toBeUndefined();
    expect(followed.decided).toEqual({ orderId, productId, quantity: 1, status: 'COMMITTED' });

    // used once: the same URL is refused, in the browser and outside it
    const again = await page.evaluate<Followed>(`(${FOLLOW})(${JSON.stringify(url)})`);
    expect(again).toEqual({ seen: [], error: 'the stream failed' });
    const refused = await fetch(`${service.url}${url}`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'INVALID_TICKET' });
    await page.close();
  });

  it("gives no ticket for another buyer's order, and a ticket opens its own order only", async () => {
    const productId = await api.listProduct({ name: 'Scooter', stock: 3, perUserLimit: 1 });
    const bobs = await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token('bob'),
      json: { productId, quantity: 1 },
    });
    const bobsOrder = String(bobs.body['orderId']);
    const eve = await api.token('eve');
    expect(
      (await api.request('POST', `/api/v1/orders/${bobsOrder}/stream-ticket`, { token: eve })).status,
    ).toBe(404);

    const eves = await api.request('POST', '/api/v1/seckill/orders', {
      token: eve,
      json: { productId, quantity: 1 },
    });
    const ticket = await api.request('POST', `/api/v1/orders/${String(eves.body['orderId'])}/stream-ticket`, {
      token: eve,
    });
    const stolen = String(ticket.body['url']).replace(String(eves.body['orderId']), bobsOrder);
    const refused = await fetch(`${service.url}${stolen}`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'INVALID_TICKET' });
  });
});
