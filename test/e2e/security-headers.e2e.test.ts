import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { drained } from '../support/drained.js';
import { routesOf } from '../support/express-routes.js';

/** What every answer of the service must carry, whatever route, status or content it has. */
const expectHardened = (what: string, headers: Headers): void => {
  const policy = headers.get('content-security-policy') ?? '';
  expect({
    what,
    nosniff: headers.get('x-content-type-options'),
    referrer: headers.get('referrer-policy'),
    framing: headers.get('x-frame-options'),
    neverFramed: policy.split(';').includes("frame-ancestors 'none'"),
    poweredBy: headers.get('x-powered-by'),
  }).toEqual({
    what,
    nosniff: 'nosniff',
    referrer: 'no-referrer',
    framing: 'DENY',
    neverFramed: true,
    poweredBy: null,
  });
};

const JSON_POLICY = "default-src 'none';frame-ancestors 'none'";

/** One request over a raw socket: what the server wrote back before it closed the connection. */
const rawExchange = (port: number, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });

/** The header fields of a raw HTTP answer. */
const headersOfRaw = (answer: string): Headers => {
  const head = answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n').slice(1);
  const headers = new Headers();
  for (const line of head)
    headers.append(line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim());
  return headers;
};

describe("helmet's headers on every answer", () => {
  let service: SeckillService;
  let api: ApiClient;
  let productId: number;
  let orderId: string;
  let owner: string;
  let admin: string;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_RATE_LIMIT_POINTS: '1000' });
    api = new ApiClient(service.url, service.config.jwtSecret);
    productId = await api.listProduct({ name: 'Helmet', stock: 10, perUserLimit: 2, maxPerOrder: 1 });
    owner = await api.token('owner');
    admin = await api.token('root', 'admin');
    const placed = await api.request('POST', '/api/v1/seckill/orders', {
      token: owner,
      json: { productId, quantity: 1 },
    });
    expect(placed.status).toBe(202);
    orderId = String(placed.body['orderId']);
    await drained(service);
  });

  afterAll(async () => {
    await service.close();
  });

  /** The answer's status and headers; a stream (the order's events) is left once its headers are in. */
  const call = async (method: string, path: string, token?: string) => {
    const controller = new AbortController();
    const response = await fetch(`${service.url}${path}`, {
      method,
      signal: controller.signal,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    controller.abort();
    return response;
  };

  it('walks every route of the app, with and without a token, and finds them on each answer', async () => {
    const routes = routesOf(service.httpApp!);
    expect(routes).toEqual(
      expect.arrayContaining(['POST /api/v1/seckill/orders', 'GET /dashboard', 'GET /docs', 'GET /metrics']),
    );
    const statuses = new Set<number>();
    for (const route of routes) {
      const [method = '', pattern = ''] = route.split(' ');
      const path = pattern
        .replace('{orderId}', orderId)
        .replace('{productId}', String(productId))
        .replace('{id}', String(productId));
      const token = path.includes('/admin/') ? admin : owner;
      for (const [who, credential] of [
        ['anyone', undefined],
        ['a token', token],
      ] as const) {
        const response = await call(method, path, credential);
        statuses.add(response.status);
        expectHardened(`${route} by ${who}: ${response.status}`, response.headers);
        const type = response.headers.get('content-type') ?? '';
        if (type.includes('json'))
          expect({ route, policy: response.headers.get('content-security-policy') }).toEqual({
            route,
            policy: JSON_POLICY,
          });
      }
    }
    // the walk met successes and refusals alike
    expect([...statuses].some((s) => s < 300)).toBe(true);
    expect([...statuses].some((s) => s >= 400)).toBe(true);
  });

  it('puts them on what no route answers: an unknown path, a wrong method, the pages’ files', async () => {
    for (const [method, path] of [
      ['GET', '/nowhere'],
      ['DELETE', '/api/v1/seckill/orders'],
      ['GET', '/api/v1/seckill/orders'],
      ['GET', '/dashboard/dashboard.js'],
      ['GET', '/dashboard/dashboard.css'],
      ['GET', '/docs/swagger-ui-init.js'],
      ['GET', '/docs/swagger-ui.css'],
      ['GET', '/docs/swagger-ui-bundle.js'],
    ] as const) {
      const response = await call(method, path);
      expectHardened(`${method} ${path}: ${response.status}`, response.headers);
    }
  });

  it('gives the pages a policy that allows no inline script and no other origin', async () => {
    for (const path of ['/dashboard', '/docs/']) {
      const response = await call('GET', path);
      expect(response.status).toBe(200);
      const directives = new Map(
        (response.headers.get('content-security-policy') ?? '').split(';').map((d) => {
          const [name = '', ...values] = d.trim().split(/\s+/);
          return [name, values] as const;
        }),
      );
      expect({
        path,
        defaultSrc: directives.get('default-src'),
        scriptSrc: directives.get('script-src'),
      }).toEqual({ path, defaultSrc: ["'none'"], scriptSrc: ["'self'"] });
      expect(directives.get('connect-src')).toEqual(["'self'"]);
    }
  });

  it('puts them on the answer to a request Node cannot parse, which express never sees', async () => {
    const port = Number(new URL(service.url).port);
    const answer = await rawExchange(port, 'GET /\u0001 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const headers = headersOfRaw(answer);
    expect(headers.get('content-type')).toContain('application/problem+json');
    expectHardened('an unparseable request', headers);
    expect(headers.get('content-security-policy')).toBe(JSON_POLICY);
  });
});
