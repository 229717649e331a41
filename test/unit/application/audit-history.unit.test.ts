import { afterEach, describe, expect, it } from '@jest/globals';
import { type AppHarness, MINUTE, startApp } from '../../support/app-harness.js';

describe('AuditHistory', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  /** A small sale: purchases, payments, a cancellation, payment timeouts and a restock. */
  const sale = async () => {
    app = await startApp({ paymentTimeoutMs: 15 * MINUTE, auditStaleMs: 5 * MINUTE });
    const productId = await app.listProduct({ stock: 10, perUserLimit: 2, maxPerOrder: 2 });
    const ids = [await app.mustBuy('u1', productId, 2)];
    for (const user of ['u2', 'u3', 'u4', 'u5', 'u6']) ids.push(await app.mustBuy(user, productId));
    await app.drained();
    for (const [i, orderId] of ids.slice(0, 3).entries())
      await app.payOrder.execute(`u${i + 1}`, orderId, 'pay');
    await app.releaseOrder.cancel('u4', ids[3] ?? '', 'cancel');
    app.clock.advance(16 * MINUTE);
    expect(await app.releaseOrder.releaseExpired()).toBe(2);
    await app.drained();
    await app.products.restock(productId, 5, 'restock');
    return productId;
  };

  it('finds nothing wrong after a sale, and accounts for every unit', async () => {
    const productId = await sale();

    const report = await app.audit.run();

    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.eventsReplayed).toBe(app.db.events.length);
    expect(report.orders).toEqual({ PAID: 3, RELEASED: 3 });
    expect(report.products).toEqual([
      {
        productId,
        listed: 10,
        added: 5,
        committed: 7,
        returned: 3,
        sold: 4,
        replayedStock: 11,
        undecided: 0,
        mysqlStock: 11,
        gateStock: 11,
      },
    ]);
  });

  it('reports MYSQL_STOCK_DRIFT when a product row was changed behind its back', async () => {
    const productId = await sale();
    const row = app.db.products.get(productId);
    if (!row) throw new Error('product row missing');
    app.db.tables.products.set(productId, { ...row, stock: row.stock + 7 });

    const report = await app.audit.run();

    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      expect.objectContaining({
        kind: 'MYSQL_STOCK_DRIFT',
        productId,
        detail: 'MySQL stock 18, replayed 11',
      }),
    ]);
  });

  it('reports GATE_STOCK_DRIFT when the gate was adjusted by hand, and is clean once reconciled', async () => {
    const productId = await sale();
    await app.gate.adjust(productId, -2);

    const report = await app.audit.run();

    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      expect.objectContaining({ kind: 'GATE_STOCK_DRIFT', productId, detail: 'gate 9, expected 11' }),
    ]);

    await app.reconcile.run();
    expect((await app.audit.run()).ok).toBe(true);
  });

  it('counts reservations in flight as undecided, not as drift, until they go stale', async () => {
    app = await startApp({ consumers: false, auditStaleMs: 5 * MINUTE });
    const productId = await app.listProduct({ stock: 10 });
    const orderId = await app.mustBuy('alice', productId, 2);

    const fresh = await app.audit.run();
    expect(fresh.ok).toBe(true);
    expect(fresh.products[0]).toMatchObject({ undecided: 2, mysqlStock: 10, gateStock: 8 });

    app.clock.advance(5 * MINUTE + 1);
    const stale = await app.audit.run();
    expect(stale.violations).toEqual([expect.objectContaining({ kind: 'STALE_RESERVATION', orderId })]);
  });
});
