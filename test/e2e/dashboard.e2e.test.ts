import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SaleFigures } from '../../src/application/index.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { drained } from '../support/drained.js';

const METRICS_TOKEN = 'dashboard-metrics-token-0123';

type Figures = SaleFigures & {
  rates: { acceptedPerSecond: number; rejectedPerSecond: number; instance: string };
};

describe('the live sale figures behind /dashboard', () => {
  let service: SeckillService;
  let api: ApiClient;
  let admin: string;

  const figures = async (): Promise<Figures> => {
    const answer = await api.request('GET', '/api/v1/admin/dashboard', { token: admin });
    expect(answer.status).toBe(200);
    return answer.body as unknown as Figures;
  };

  beforeAll(async () => {
    service = await startMemoryService({
      SECKILL_RATE_LIMIT_POINTS: '100000',
      SECKILL_METRICS_TOKEN: METRICS_TOKEN,
    });
    api = new ApiClient(service.url, service.config.jwtSecret);
    admin = await api.token('ops', 'admin');
  });

  afterAll(async () => {
    await service.close();
  });

  it('serves the page to anyone, and its data to admins only', async () => {
    const page = await fetch(`${service.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('/api/v1/admin/dashboard');
    // every URL of the page is relative to it, so that it works under a load balancer's path as well
    expect(html).not.toMatch(/(src|href)="\//);
    for (const [file, type] of [
      ['dashboard.js', 'text/javascript'],
      ['uPlot.iife.min.js', 'text/javascript'],
      ['uPlot.min.css', 'text/css'],
    ] as const) {
      expect(html).toContain(`"dashboard/${file}"`);
      const served = await fetch(`${service.url}/dashboard/${file}`);
      expect([served.status, served.headers.get('content-type')]).toEqual([200, `${type}; charset=utf-8`]);
    }
    // at /dashboard/ those URLs would point one level too deep: it sends the browser to /dashboard
    const slashed = await fetch(`${service.url}/dashboard/`, { redirect: 'manual' });
    expect([slashed.status, slashed.headers.get('location')]).toEqual([301, '../dashboard']);
    expect(await api.request('GET', '/api/v1/admin/dashboard')).toMatchObject({
      status: 401,
      body: { code: 'MISSING_TOKEN' },
    });
    expect(
      await api.request('GET', '/api/v1/admin/dashboard', { token: await api.token('buyer') }),
    ).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
  });

  it("shows each product's gate, MySQL stock, sold, undecided and released units as the sale goes", async () => {
    const productId = await api.listProduct({ name: 'Lantern', stock: 30, perUserLimit: 1, maxPerOrder: 1 });
    const before = (await figures()).products.find((p) => p.productId === productId);
    expect(before).toMatchObject({ gateStock: 30, mysqlStock: 30, sold: 0, reserved: 0, released: {} });

    const flood = await runFlood(api, {
      productId,
      buyers: 120,
      concurrency: 16,
      seed: 7,
      buyerPrefix: 'dash',
    });
    await drained(service);
    const { sold } = await flood.decide();
    expect(sold).toBe(30);

    const after = await figures();
    expect(after.products.find((p) => p.productId === productId)).toMatchObject({
      name: 'Lantern',
      gateStock: 0,
      mysqlStock: 0,
      sold,
      reserved: 0,
    });
    // every message was consumed: no row is left open, and consumed rows are not counted
    expect(after.outbox).toEqual({ pending: 0, sent: 0, failed: 0, dead: 0 });
    expect(after.consumerLag.map((g) => [g.groupId, g.lag]).sort()).toEqual([
      ['seckill-commit', 0],
      ['seckill-compensation', 0],
    ]);
    expect(Date.parse(after.at)).not.toBeNaN();

    // a cancelled order shows up as released, by reason, and its unit goes back to both stocks
    const { orderId, buyer } = flood.accepted[0]!;
    const cancelled = await api.request('POST', `/api/v1/orders/${orderId}/cancel`, {
      token: await api.token(`dash-${buyer}`),
    });
    expect(cancelled.status).toBe(200);
    await drained(service);
    await eventually(async () => {
      expect((await figures()).products.find((p) => p.productId === productId)).toMatchObject({
        gateStock: 1,
        mysqlStock: 1,
        sold: 29,
        released: { CANCELLED: 1 },
      });
    });
  });

  it('counts accepted and rejected answers per second while buyers keep clicking', async () => {
    const productId = await api.listProduct({ name: 'Gone', stock: 1, perUserLimit: 1, maxPerOrder: 1 });
    const token = await api.token('clicker');
    let clicking = true;
    const clicks = (async () => {
      while (clicking)
        await api.request('POST', '/api/v1/seckill/orders', { token, json: { productId, quantity: 1 } });
    })();
    try {
      await eventually(
        async () => {
          const { rates } = await figures();
          expect(rates.rejectedPerSecond).toBeGreaterThan(0);
          expect(rates.instance).toMatch(/:\d+$/);
        },
        5_000,
        100,
      );
    } finally {
      clicking = false;
      await clicks;
    }
  });

  it('exposes the same figures as Prometheus gauges', async () => {
    // the earlier test's last order may still be on its way to the commit consumer: wait until it is decided
    await drained(service);
    // each reading of the figures sets the gauges too, whenever the sampler last read them
    const productId = (await figures()).products[0]!.productId;
    const text = await (
      await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(text).toMatch(new RegExp(`^seckill_gate_stock\\{product="${productId}"\\} \\d+$`, 'm'));
    expect(text).toMatch(new RegExp(`^seckill_mysql_stock\\{product="${productId}"\\} \\d+$`, 'm'));
    expect(text).toMatch(
      /^seckill_consumer_lag\{group="seckill-commit",topic="seckill\.orders\.reserved"\} 0$/m,
    );
    expect(text).toMatch(/^seckill_outbox_rows\{status="dead"\} 0$/m);
  });
});
