import { afterEach, describe, expect, it } from '@jest/globals';
import { compensationMessageId, OutboxStatus, Topics } from '../../../src/application/index.js';
import { type AppHarness, startApp } from '../../support/app-harness.js';

describe('CompensateReservation', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  it('gives a released reservation back to the gate once, however often it is delivered', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 3, perUserLimit: 1, maxPerOrder: 1 });
    const orderId = await app.mustBuy('alice', productId);
    await app.mustBuy('bob', productId);
    await app.drained();
    await app.releaseOrder.cancel('alice', orderId, 'cancel');
    await app.drained();
    expect(await app.gate.stockLeft(productId)).toBe(2);
    const compensations = app.bus.messages(Topics.STOCK_COMPENSATION);
    expect(compensations).toHaveLength(1);

    await app.compensate.handle(compensations);
    await app.compensate.handle([...compensations, ...compensations]);

    expect(await app.gate.stockLeft(productId)).toBe(2);
    expect((await app.outboxRow(compensationMessageId(orderId))).status).toBe(OutboxStatus.CONSUMED);
    // alice's quota came back once: one more unit, not two
    expect(await app.buy('alice', productId)).toMatchObject({ ok: true });
    expect(await app.buy('alice', productId)).toMatchObject({ ok: false, code: 'LIMIT_EXCEEDED' });
  });

  it('clears the sold-out flag, so that the next buyer reaches the gate and gets the unit', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 1 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    expect(await app.buy('bob', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(app.soldOut.isSoldOut(productId)).toBe(true);

    await app.releaseOrder.cancel('alice', orderId, 'cancel');
    await app.drained();

    expect(app.soldOut.isSoldOut(productId)).toBe(false);
    expect(await app.buy('bob', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
  });

  it('a redelivered compensation does not announce stock that did not come back', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 1 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    await app.releaseOrder.cancel('alice', orderId, 'cancel');
    await app.drained();
    await app.mustBuy('bob', productId);
    expect(await app.buy('carol', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

    await app.compensate.handle(app.bus.messages(Topics.STOCK_COMPENSATION));

    expect(app.soldOut.isSoldOut(productId)).toBe(true);
    expect(await app.gate.stockLeft(productId)).toBe(0);
  });
});
