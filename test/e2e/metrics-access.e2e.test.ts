import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';

/** The sample of one series of a Prometheus exposition, by name and labels (in any order); undefined when absent. */
const sampleOf = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith(`${name}{`) &&
        Object.entries(labels).every(([label, value]) => l.includes(`${label}="${value}"`)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('metrics and readiness of a running service', () => {
  let service: SeckillService | null = null;

  afterEach(async () => {
    await service?.close();
    service = null;
  });

  const scrape = async (url: string): Promise<string> => {
    const answer = await fetch(`${url}/metrics`);
    expect(answer.status).toBe(200);
    return answer.text();
  };

  it('labels an error answered inside an /api/v1 router with the same route as a success', async () => {
    service = await startMemoryService();
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const productId = await api.listProduct({ name: 'Bell', stock: 3, perUserLimit: 1, maxPerOrder: 1 });
    const placed = await service.app.placeOrder.execute({
      userId: 'ringer',
      productId,
      quantity: 1,
      correlationId: 'labels',
    });
    if (!placed.ok) throw new Error('the order was not placed');
    const token = await api.token('ringer');
    expect((await api.request('GET', `/api/v1/orders/${placed.orderId}`, { token })).status).toBe(200);
    expect((await api.request('GET', `/api/v1/orders/${randomUUID()}`, { token })).status).toBe(404);
    expect((await api.request('GET', '/api/v1/orders/not-an-id', { token })).status).toBe(400);
    expect((await api.request('GET', `/api/v1/orders/${placed.orderId}`)).status).toBe(401);

    const text = await scrape(service.url);
    const route = '/api/v1/orders/:orderId';
    for (const code of ['200', '404', '400', '401'])
      expect({
        code,
        count: sampleOf(text, 'seckill_http_requests_total', { method: 'GET', route, code }),
      }).toEqual({
        code,
        count: 1,
      });
    expect(text).not.toMatch(/route="\/orders\//);
    expect(sampleOf(text, 'seckill_http_request_duration_seconds_count', { method: 'GET', route })).toBe(4);
  });
});
