import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SaleDashboard } from '../../src/application/index.js';
import { JwtTokens } from '../../src/adapters/http/tokens.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';

const METRICS_TOKEN = 'e2e-metrics-token-0123456789';
const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };

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
    jest.restoreAllMocks();
    await service?.close();
    service = null;
  });

  const scrape = async (url: string, headers: Record<string, string> = bearer): Promise<string> => {
    const answer = await fetch(`${url}/metrics`, { headers });
    expect(answer.status).toBe(200);
    return answer.text();
  };

  it('opens /metrics on the API port to the SECKILL_METRICS_TOKEN credential only', async () => {
    service = await startMemoryService({ SECKILL_METRICS_TOKEN: METRICS_TOKEN });
    const refused = await fetch(`${service.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(await refused.json()).toMatchObject({ code: 'MISSING_CREDENTIAL' });
    const admin = await new ApiClient(service.url, service.config.jwtSecret).token('ops', 'admin');
    expect(
      (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).status,
    ).toBe(401);
    expect(await scrape(service.url)).toMatch(/^seckill_http_requests_total\{/m);
    const basic = `Basic ${Buffer.from(`prometheus:${METRICS_TOKEN}`).toString('base64')}`;
    expect(await scrape(service.url, { authorization: basic })).toMatch(/^# TYPE seckill_gate_stock gauge$/m);
  });

  it('keeps /metrics closed on the API port without a credential, and says how to scrape', async () => {
    service = await startMemoryService();
    const closed = await fetch(`${service.url}/metrics`, { headers: bearer });
    expect(closed.status).toBe(404);
    expect(closed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await closed.json()).toMatchObject({
      code: 'METRICS_NOT_SERVED',
      detail: expect.stringMatching(/SECKILL_METRICS_TOKEN.*SECKILL_METRICS_PORT/) as unknown,
    });
  });

  it("serves /metrics, /healthz and /readyz on a loopback metrics port of the API's process, without a credential", async () => {
    service = await startMemoryService({ SECKILL_METRICS_PORT: '0' });
    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(service.metricsUrl).not.toBe(service.url);
    await fetch(`${service.url}/healthz`);
    const text = await scrape(service.metricsUrl, {});
    expect(sampleOf(text, 'seckill_http_requests_total', { route: '/healthz', code: '200' })).toBe(1);
    expect(await (await fetch(`${service.metricsUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    // the operator's port shows what fails; the API port only to an admin
    expect(await (await fetch(`${service.metricsUrl}/readyz`)).json()).toEqual({
      status: 'ready',
      checks: {},
      details: {},
    });
    expect(await (await fetch(`${service.url}/readyz`)).json()).toEqual({ status: 'ready', checks: {} });
    const api = new ApiClient(service.url, service.config.jwtSecret);
    expect(await api.request('GET', '/readyz', { token: await api.token('ops', 'admin') })).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: {}, details: {} },
    });
  });

  it('reads the gauges once per sampling interval, however often it is scraped', async () => {
    const readings = jest.spyOn(SaleDashboard.prototype, 'refreshGauges');
    service = await startMemoryService({
      SECKILL_METRICS_TOKEN: METRICS_TOKEN,
      SECKILL_METRICS_SAMPLE_MS: String(60 * 60_000),
    });
    // the first reading, at start
    await eventually(() => expect(readings).toHaveBeenCalledTimes(1));
    await readings.mock.results[0]!.value;
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const productId = await api.listProduct({ name: 'Kite', stock: 9, perUserLimit: 1, maxPerOrder: 1 });

    const scrapes = await Promise.all(Array.from({ length: 25 }, () => scrape(service!.url)));
    expect(readings).toHaveBeenCalledTimes(1);
    // listed after the reading: the scrapes render what was read, they read nothing themselves
    for (const text of scrapes)
      expect(sampleOf(text, 'seckill_gate_stock', { product: String(productId) })).toBeUndefined();
  });

  it('samples again at each interval, so a scrape sees what changed', async () => {
    service = await startMemoryService({
      SECKILL_METRICS_TOKEN: METRICS_TOKEN,
      SECKILL_METRICS_SAMPLE_MS: '100',
    });
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const productId = await api.listProduct({ name: 'Drum', stock: 7, perUserLimit: 1, maxPerOrder: 1 });
    await eventually(async () => {
      expect(sampleOf(await scrape(service!.url), 'seckill_gate_stock', { product: String(productId) })).toBe(
        7,
      );
    });
  });

  it('labels an error answered inside an /api/v1 router with the same route as a success', async () => {
    service = await startMemoryService({ SECKILL_METRICS_TOKEN: METRICS_TOKEN });
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

  it("the metrics listener keeps the API's bounds: a client that trickles its headers is cut off", async () => {
    service = await startMemoryService({
      SECKILL_METRICS_PORT: '0',
      SECKILL_HTTP_REQUEST_TIMEOUT_MS: '1000',
      SECKILL_HTTP_HEADERS_TIMEOUT_MS: '500',
    });
    const { hostname, port } = new URL(service.metricsUrl);
    const socket = connect(Number(port), hostname, () => socket.write('GET /metrics HTTP/1.1\r\n'));
    // one more byte of a header every 100 ms, for ever: a slowloris
    const trickle = setInterval(() => socket.write('x'), 100);
    socket.on('error', () => undefined);
    const closed = new Promise<'closed'>((resolve) => socket.once('close', () => resolve('closed')));
    // Node's own bounds would hold it for five minutes
    const waited = new Promise<'still open'>((resolve) =>
      setTimeout(() => resolve('still open'), 5_000).unref(),
    );
    try {
      expect(await Promise.race([closed, waited])).toBe('closed');
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it("the metrics listener, bound wide, reads admin tokens with the API's issuer and audience", async () => {
    service = await startMemoryService({
      SECKILL_METRICS_PORT: '0',
      SECKILL_METRICS_HOST: '0.0.0.0',
      SECKILL_JWT_ISSUER: 'seckill-e2e',
      SECKILL_JWT_AUDIENCE: 'seckill-api',
    });
    const { jwtSecret } = service.config;
    const readyz = `http://127.0.0.1:${new URL(service.metricsUrl).port}/readyz`;
    const detailsFor = async (tokens: JwtTokens) => {
      const token = await tokens.sign({ userId: 'ops', role: 'admin' });
      const answer = await fetch(readyz, { headers: { authorization: `Bearer ${token}` } });
      return 'details' in ((await answer.json()) as Record<string, unknown>);
    };
    const policy = { maxTtlSeconds: 3_600, issuer: 'seckill-e2e', audience: 'seckill-api' };
    expect(await detailsFor(new JwtTokens(jwtSecret, policy))).toBe(true);
    // the same secret, for another audience: no admin here
    expect(await detailsFor(new JwtTokens(jwtSecret, { ...policy, audience: 'another-service' }))).toBe(
      false,
    );
  });
});
