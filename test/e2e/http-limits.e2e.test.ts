import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { drained } from '../support/drained.js';
import { openEventStream } from '../support/sse.js';

const REQUEST_TIMEOUT_MS = 1_500;
const HEADERS_TIMEOUT_MS = 1_000;
/** the server looks for late requests every quarter of the headers' bound; the rest is a loaded machine's slack */
const CUT_WITHIN_MS = REQUEST_TIMEOUT_MS + HEADERS_TIMEOUT_MS / 4 + 1_000;

type Cut = Readonly<{ answer: string; elapsedMs: number }>;

/**
 * A client that sends `head` at once, then one more byte of `trickle` every 100 ms, for ever: a stalled
 * upload, or a slowloris. It stops writing once the server answers, as a client reading its answer would.
 * `cut` resolves when the server has closed the connection.
 */
const slowClient = (port: number, head: string, trickle: string) => {
  const started = performance.now();
  const socket: Socket = connect(port, '127.0.0.1', () => socket.write(head));
  const chunks: Buffer[] = [];
  let sent = 0;
  const timer = setInterval(() => {
    if (chunks.length === 0) socket.write(trickle[sent++ % trickle.length] ?? ' ');
  }, 100);
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // a write racing the server's close: the answer, if any, is already in
  socket.on('error', () => undefined);
  const cut = new Promise<Cut>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer: Buffer.concat(chunks).toString('latin1'), elapsedMs: performance.now() - started });
    }),
  );
  return { cut, closed: () => socket.destroyed };
};

describe('the HTTP server cuts requests that do not arrive in time (memory profile, short bounds)', () => {
  let service: SeckillService;
  let api: ApiClient;
  let port: number;
  let productId: number;

  beforeAll(async () => {
    service = await startMemoryService({
      SECKILL_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      SECKILL_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      SECKILL_ORDER_EVENTS_POLL_MS: '20',
      SECKILL_RATE_LIMIT_POINTS: '1000',
    });
    api = new ApiClient(service.url, service.config.jwtSecret);
    port = Number(new URL(service.url).port);
    productId = await api.listProduct({ name: 'Hourglass', stock: 50, perUserLimit: 5, maxPerOrder: 1 });
  });

  afterAll(async () => {
    await service.close();
  });

  /** An order's request line and headers, with the first byte of its body. */
  const orderHead = (token: string) =>
    'POST /api/v1/seckill/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{`;
  const orderBody = `"productId":1,"quantity":1,"pad":"${'x'.repeat(40)}"}`;

  const buy = async (buyer: string) =>
    api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token(buyer),
      json: { productId, quantity: 1 },
    });

  it('answers a body trickled byte by byte with a 408 problem within the bound, and serves others meanwhile', async () => {
    const slow = slowClient(port, orderHead(await api.token('slow-uploader')), orderBody);
    // while the slow upload holds its connection, a buyer's order and a page are served
    const placed = await buy('meanwhile');
    expect(placed.status).toBe(202);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    expect(slow.closed()).toBe(false);

    const { answer, elapsedMs } = await slow.cut;
    expect(elapsedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
    expect(elapsedMs).toBeLessThan(CUT_WITHIN_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toContain('Content-Type: application/problem+json');
    expect(answer).toContain('X-Content-Type-Options: nosniff');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      status: 408,
      code: 'REQUEST_TIMEOUT',
    });
    // and the service goes on selling
    expect((await buy('afterwards')).status).toBe(202);
  });

  it('cuts headers trickled line by line (slowloris) within the headers bound', async () => {
    const slow = slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Padding: slow\r\n');
    const { answer, elapsedMs } = await slow.cut;
    expect(elapsedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
    expect(elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + HEADERS_TIMEOUT_MS / 4 + 1_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('never answers twice: a request refused before its body arrived is not answered again when cut', async () => {
    const slow = slowClient(
      port,
      'POST /api/v1/seckill/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{',
      orderBody,
    );
    const { answer, elapsedMs } = await slow.cut;
    expect(elapsedMs).toBeLessThan(CUT_WITHIN_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('keeps an order event stream open past the request bound: the bound is on receiving the request only', async () => {
    const placed = await buy('watcher');
    const orderId = String(placed.body['orderId']);
    const token = await api.token('watcher');
    await drained(service);
    const stream = await openEventStream(`${service.url}/api/v1/orders/${orderId}/events`, token);
    expect(stream.status).toBe(200);
    expect((await stream.next())?.data['status']).toBe('COMMITTED');

    // a slow upload started after the stream is cut: the stream has now been open longer than the bound
    const slow = slowClient(port, orderHead(await api.token('slow-uploader')), orderBody);
    expect((await slow.cut).answer).toMatch(/^HTTP\/1\.1 408 /);

    const paid = await api.request('POST', `/api/v1/orders/${orderId}/payment`, { token });
    expect(paid.status).toBe(200);
    expect(await stream.next()).toEqual({
      event: 'status',
      data: { orderId, productId, quantity: 1, status: 'PAID' },
    });
    expect(await stream.next()).toBeNull();
  });
});

describe('the HTTP server bounds its connections (SECKILL_HTTP_MAX_CONNECTIONS)', () => {
  let service: SeckillService;
  let port: number;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_HTTP_MAX_CONNECTIONS: '2' });
    port = Number(new URL(service.url).port);
  });

  afterAll(async () => {
    await service.close();
  });

  /** A keep-alive connection that has been answered once (so the server counts it), and is kept open. */
  const heldConnection = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
      );
      socket.once('data', () => resolve(socket));
      socket.once('error', reject);
    });

  /** What a new connection gets for a request: its answer, or nothing when it is closed first. */
  const oneRequest = (): Promise<string> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
      );
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });

  it('closes a connection over the limit at once, and takes new ones once others have gone', async () => {
    const held = [await heldConnection(), await heldConnection()];
    expect(await oneRequest()).toBe('');
    held[0]!.destroy();
    // the server counts the connection gone once it has seen it close, a moment after the client
    await eventually(async () => expect(await oneRequest()).toMatch(/^HTTP\/1\.1 200 /), 5_000, 20);
    held[1]!.destroy();
  });
});
