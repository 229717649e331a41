import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree } from '../support/books.js';
import { ApiClient, inParallel } from '../support/e2e-service.js';
import { mysqlServerUrl } from '../support/mysql-database.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { drained } from '../support/drained.js';

const OUTAGE_MS = 10_000;

describe('drill: MariaDB unreachable for 10 s during the flood', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const server = new URL(mysqlServerUrl());
    proxy = await new TcpProxy(server.hostname, Number(server.port || 3306)).start();
    stack = await createRealStack();
    // the service reaches MariaDB through the proxy only
    const url = new URL(stack.db.url);
    url.host = `127.0.0.1:${proxy.port}`;
    service = await stack.start(
      { http: true, worker: true },
      {
        SECKILL_MYSQL_URL: url.toString(),
        SECKILL_MYSQL_CONNECT_TIMEOUT_MS: '500',
        SECKILL_MYSQL_ACQUIRE_TIMEOUT_MS: '500',
        SECKILL_MYSQL_TIMEOUT_MS: '1000',
      },
    );
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
    await proxy.down();
  });

  it('answers 503 while it is gone, gives the gate back, and loses no accepted order', async () => {
    const productId = await api.listProduct({ name: 'Outage', stock: 150, perUserLimit: 1, maxPerOrder: 1 });
    let buyer = 0;
    const answers: Array<{ buyer: number; status: number; code: unknown; orderId: unknown }> = [];
    const buy = async () => {
      const id = buyer++;
      const answer = await api.request('POST', '/api/v1/seckill/orders', {
        token: await api.token(`buyer-${id}`),
        json: { productId, quantity: 1 },
      });
      answers.push({
        buyer: id,
        status: answer.status,
        code: answer.body['code'],
        orderId: answer.body['orderId'],
      });
    };
    const wave = (count: number) =>
      inParallel(
        Array.from({ length: count }, () => buy),
        8,
      );

    await wave(50);
    await proxy.down();
    const outageEnds = Date.now() + OUTAGE_MS;
    while (Date.now() < outageEnds) await wave(8);
    await proxy.start();
    await wave(200);

    const during = answers.filter((a) => a.status === 503);
    expect(during.length).toBeGreaterThan(0);
    for (const a of answers) expect([202, 409, 503]).toContain(a.status);

    await drained(service, 120_000);
    const accepted = answers.filter((a) => a.status === 202);
    const decided = await inParallel(
      accepted.map((a) => async () => {
        const read = await api.request('GET', `/api/v1/orders/${String(a.orderId)}`, {
          token: await api.token(`buyer-${a.buyer}`),
        });
        return {
          orderId: a.orderId,
          http: read.status,
          status: read.body['status'],
          reason: read.body['reason'],
        };
      }),
      16,
    );
    // every accepted order exists and is decided; none is lost, none is left reserved, none released
    expect(decided.filter((o) => o.status !== 'COMMITTED')).toEqual([]);
    expect(accepted.length).toBe(150);
    // every failed attempt gave its unit back to the gate: all 150 units sold, none stranded, none oversold
    const report = await expectBooksAgree(api, [productId]);
    expect(report.products.find((p) => p.productId === productId)).toMatchObject({
      sold: 150,
      mysqlStock: 0,
      gateStock: 0,
    });
  });
});
