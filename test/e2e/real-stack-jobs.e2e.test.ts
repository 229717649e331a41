import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from '@jest/globals';
import { OutboxStatus } from '../../src/application/index.js';
import { connectRedis } from '../../src/adapters/redis/redis-connection.js';
import { gateKeys } from '../../src/adapters/redis/redis-stock-gate.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';
import { expectBooksAgree } from '../support/books.js';

const run = promisify(execFile);
type Line = {
  productId: number;
  action: string;
  drift: number;
  gateStock: number | null;
  gateAfter: number | null;
};

describe('scheduled jobs and the audit on the real stack', () => {
  let stack: RealStack | null = null;
  afterEach(async () => {
    await stack?.broker.thaw().catch(() => undefined);
    await stack?.stop();
    stack = null;
  });

  const start = async (env: Record<string, string>, roles = { http: true, worker: true }) => {
    stack = await createRealStack(env);
    const service = await stack.start(roles);
    return { service, api: new ApiClient(service.url, TEST_SECRET), stack };
  };
  const admin = (api: ApiClient) => api.token('root', 'admin');
  const redis = () => connectRedis({ url: stack!.env['SECKILL_REDIS_URL']! });
  const gateKey = (productId: number) => gateKeys(stack!.namespace, productId).stock;

  it('the outbox relay delivers every order the frozen broker never took', async () => {
    const { service, api } = await start({
      SECKILL_OUTBOX_RELAY_MS: '500',
      SECKILL_OUTBOX_PENDING_GRACE_MS: '500',
      SECKILL_KAFKA_REQUEST_TIMEOUT_MS: '500',
      SECKILL_METRICS_PORT: '0',
    });
    const productId = await api.listProduct({ name: 'Drone', stock: 20, perUserLimit: 1, maxPerOrder: 1 });
    await stack!.broker.freeze();
    const flood = await runFlood(api, { productId, buyers: 60, concurrency: 16, seed: 3, repeats: 0 });
    expect(flood.accepted).toHaveLength(20);
    // wait until every publish made by the requests themselves has failed: only the relay can deliver now
    const { outbox } = service.app.ports;
    await eventually(
      async () => {
        const counts = await outbox.countByStatus();
        expect(counts[OutboxStatus.PENDING] + counts[OutboxStatus.FAILED]).toBe(20);
      },
      60_000,
      100,
    );

    await stack!.broker.thaw();
    await drained(service, 120_000);
    expect(await flood.decide()).toEqual({ sold: 20, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    const metrics = await fetch(`${service.metricsUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/seckill_outbox_published_total\{topic="seckill.orders.reserved"\} \d+/);
  });

  it('releases unpaid orders after the payment timeout so the next buyer gets the unit, never a paid one', async () => {
    const { service, api } = await start({
      SECKILL_PAYMENT_TIMEOUT_MS: '1500',
      SECKILL_PAYMENT_SCAN_MS: '300',
    });
    const lastUnit = await api.listProduct({ name: 'Last unit', stock: 1 });
    const paidItem = await api.listProduct({ name: 'Paid item', stock: 1 });
    const alice = await api.token('alice');
    const carol = await api.token('carol');
    const unpaid = await api.request('POST', '/api/v1/seckill/orders', {
      token: alice,
      json: { productId: lastUnit, quantity: 1 },
    });
    const paid = await api.request('POST', '/api/v1/seckill/orders', {
      token: carol,
      json: { productId: paidItem, quantity: 1 },
    });
    await drained(service);
    const pay = await api.request('POST', `/api/v1/orders/${String(paid.body['orderId'])}/payment`, {
      token: carol,
    });
    expect(pay.body['status']).toBe('PAID');
    const bob = await api.token('bob');
    expect(
      (
        await api.request('POST', '/api/v1/seckill/orders', {
          token: bob,
          json: { productId: lastUnit, quantity: 1 },
        })
      ).body['code'],
    ).toBe('SOLD_OUT');

    await eventually(
      async () => {
        const order = await api.request('GET', `/api/v1/orders/${String(unpaid.body['orderId'])}`, {
          token: alice,
        });
        expect(order.body).toMatchObject({ status: 'RELEASED', reason: 'PAYMENT_TIMEOUT' });
      },
      30_000,
      100,
    );
    await drained(service);

    const next = await api.request('POST', '/api/v1/seckill/orders', {
      token: bob,
      json: { productId: lastUnit, quantity: 1 },
    });
    expect(next.status).toBe(202);
    await drained(service);
    const bobs = await api.request('GET', `/api/v1/orders/${String(next.body['orderId'])}`, { token: bob });
    expect(bobs.body['status']).toBe('COMMITTED');
    const carols = await api.request('GET', `/api/v1/orders/${String(paid.body['orderId'])}`, {
      token: carol,
    });
    expect(carols.body['status']).toBe('PAID');
  });

  it('reconciliation corrects a gate drifted either way, rebuilds a lost one, and records StockReconciled', async () => {
    const { service, api } = await start({ SECKILL_RECONCILE_SETTLE_MS: '200' });
    const productId = await api.listProduct({ name: 'Watch', stock: 10, perUserLimit: 1, maxPerOrder: 1 });
    for (const buyer of ['a', 'b', 'c'])
      await api.request('POST', '/api/v1/seckill/orders', {
        token: await api.token(buyer),
        json: { productId, quantity: 1 },
      });
    await drained(service);
    const client = redis();
    const reconcile = async (): Promise<Line> => {
      const answer = await api.request('POST', '/api/v1/admin/reconciliations', { token: await admin(api) });
      return (answer.body['products'] as Line[]).find((l) => l.productId === productId)!;
    };
    try {
      await client.incrby(gateKey(productId), 4);
      expect(await reconcile()).toMatchObject({ action: 'ADJUSTED', drift: 4, gateAfter: 7 });
      await client.decrby(gateKey(productId), 2);
      expect(await reconcile()).toMatchObject({ action: 'ADJUSTED', drift: -2, gateAfter: 7 });
      await client.del(gateKey(productId));
      expect(await reconcile()).toMatchObject({ action: 'REBUILT', gateAfter: 7 });
      expect(await reconcile()).toMatchObject({ action: 'IN_STEP', drift: 0 });
    } finally {
      await client.quit();
    }
    const audit = await api.request('GET', '/api/v1/admin/audit', { token: await admin(api) });
    expect(audit.body['ok']).toBe(true);
    const events = await stack!.db.orm.em
      .getConnection()
      .execute<Array<{ n: number }>>("SELECT COUNT(*) AS n FROM event_store WHERE type = 'StockReconciled'");
    expect(Number(events[0]?.n)).toBe(3);
  });

  it('changes nothing while reservations are in flight, where copying MySQL stock into Redis would re-open sold units', async () => {
    // an API without a worker: reservations stay in flight
    const { service, api } = await start(
      { SECKILL_RECONCILE_SETTLE_MS: '200' },
      { http: true, worker: false },
    );
    const productId = await api.listProduct({ name: 'Sneakers', stock: 40, perUserLimit: 1, maxPerOrder: 1 });
    const first = await runFlood(api, { productId, buyers: 30, concurrency: 8, seed: 5, repeats: 0 });
    expect(first.accepted).toHaveLength(30);
    const client = redis();
    try {
      const answer = await api.request('POST', '/api/v1/admin/reconciliations', { token: await admin(api) });
      const line = (answer.body['products'] as Line[]).find((l) => l.productId === productId);
      expect(line).toMatchObject({ action: 'IN_STEP', drift: 0, gateStock: 10 });
      expect(await client.get(gateKey(productId))).toBe('10');

      // the naive reconciliation, kept as the regression it must never become: it copies MySQL stock (40)
      await client.set(gateKey(productId), '40');
      const second = await runFlood(api, { productId, buyers: 60, concurrency: 8, seed: 6, repeats: 0 });
      // 10 units were left, yet the copied gate lets 40 more buyers through: 30 of them will be refused by MySQL
      expect(first.accepted.length + second.accepted.length).toBeGreaterThan(40);
    } finally {
      await client.quit();
    }
    await service.close();
  });

  it('runs through a flood to the sell-out and changes nothing: every accepted order is committed', async () => {
    const { service, api } = await start({ SECKILL_RECONCILE_SETTLE_MS: '500' });
    const stock = 1_500;
    const productId = await api.listProduct({ name: 'Console', stock, perUserLimit: 1, maxPerOrder: 1 });
    let flooding = true;
    const flood = runFlood(api, { productId, buyers: 1_800, concurrency: 8, seed: 7, repeats: 0 }).finally(
      () => (flooding = false),
    );
    // eight buyers are always somewhere between the gate and MySQL: no reading may take them for a drift
    const lines: Line[] = [];
    while (flooding) {
      const answer = await api.request('POST', '/api/v1/admin/reconciliations', { token: await admin(api) });
      expect(answer.status).toBe(200);
      lines.push((answer.body['products'] as Line[]).find((l) => l.productId === productId)!);
    }
    const { accepted, unexpected, decide } = await flood;
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => l.action !== 'IN_STEP')).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(accepted).toHaveLength(stock);
    await drained(service);
    expect(await decide()).toEqual({ sold: stock, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectBooksAgree(api, [productId]);
  });

  it('the audit fails, over HTTP and from the CLI with exit code 1, once a product row has been tampered with', async () => {
    const { service, api } = await start({});
    const productId = await api.listProduct({ name: 'Ring', stock: 5 });
    await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token('dora'),
      json: { productId, quantity: 1 },
    });
    await drained(service);
    const cli = () =>
      // a command that has printed its report ends: one still running after a minute is a failure of its own
      run('node', ['dist/src/infrastructure/main.js', 'audit'], {
        env: { ...process.env, ...stack!.env },
        timeout: 60_000,
      });
    expect((await cli()).stdout).toContain('audit: clean');

    await stack!.db.orm.em
      .getConnection()
      .execute('UPDATE product SET stock = stock + 1 WHERE id = ?', [productId]);
    const audit = await api.request('GET', '/api/v1/admin/audit', { token: await admin(api) });
    expect(audit.body['ok']).toBe(false);
    expect(audit.body['violations']).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'MYSQL_STOCK_DRIFT', productId })]),
    );
    const failed = await cli().then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain('MYSQL_STOCK_DRIFT');
    // two `seckill audit` processes, each starting the real stack's clients: seconds each
  }, 180_000);
});
