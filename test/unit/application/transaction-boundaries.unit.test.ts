import { describe, expect, it } from '@jest/globals';
import { callsFromTransactions } from '../../support/app-doubles.js';
import { MINUTE, startApp } from '../../support/app-harness.js';

describe('transaction boundaries', () => {
  it('never calls the gate (Redis) or the publisher (Kafka) from inside a transaction, in any use case', async () => {
    callsFromTransactions.count = 0;
    callsFromTransactions.calls.length = 0;
    const app = await startApp({ paymentTimeoutMs: MINUTE, settleMs: 10 });
    const productId = await app.listProduct({ stock: 3, perUserLimit: 2, maxPerOrder: 1 });
    const paid = await app.mustBuy('alice', productId);
    const cancelled = await app.mustBuy('bob', productId);
    await app.mustBuy('carol', productId);
    await app.drained();
    await app.payOrder.execute('alice', paid, 'pay');
    await app.releaseOrder.cancel('bob', cancelled, 'cancel');
    await app.drained();
    app.clock.advance(2 * MINUTE);
    await app.releaseOrder.releaseExpired();
    await app.products.restock(productId, 2, 'restock');
    await app.gate.adjust(productId, -1); // a drift, so that reconciliation writes
    await app.reconcile.run();
    app.publisher.failing = true;
    await app.mustBuy('dave', productId);
    app.publisher.failing = false;
    app.clock.advance(MINUTE);
    await app.relay.run();
    await app.drained();
    await app.audit.run();

    expect(app.gate.reserveCalls).toBeGreaterThan(0);
    expect(app.publisher.attempts).toBeGreaterThan(0);
    expect(callsFromTransactions.calls).toEqual([]);
  });
});
