import { afterEach, describe, expect, it } from '@jest/globals';
import { IllegalOrderTransition, OrderNotFound, orderStreamId } from '../../../src/domain/index.js';
import { type AppHarness, startApp } from '../../support/app-harness.js';

describe('PayOrder', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  it('marks a COMMITTED order PAID', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    const paidAt = app.clock.advance(60_000);

    const view = await app.payOrder.execute('alice', orderId, 'pay-1');

    expect(view).toMatchObject({ orderId, status: 'PAID', updatedAt: paidAt });
    expect(await app.order(orderId)).toMatchObject({ status: 'PAID' });
    expect((await app.streamEvents(orderStreamId(orderId))).at(-1)).toEqual({
      type: 'OrderPaid',
      data: { orderId, paidAt },
    });
    expect(await app.mysqlStock(productId)).toBe(4);
  });

  it('paying twice is one payment', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    await app.payOrder.execute('alice', orderId, 'pay-1');
    const before = app.writes();

    const again = await app.payOrder.execute('alice', orderId, 'pay-2');

    expect(again).toMatchObject({ status: 'PAID' });
    expect(app.writes()).toEqual(before);
    expect(
      (await app.streamEvents(orderStreamId(orderId))).filter((e) => e.type === 'OrderPaid'),
    ).toHaveLength(1);
  });

  it('a reservation MySQL has not committed cannot be paid', async () => {
    app = await startApp({ consumers: false });
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    const before = app.writes();

    await expect(app.payOrder.execute('alice', orderId, 'pay-1')).rejects.toBeInstanceOf(
      IllegalOrderTransition,
    );

    expect(app.writes()).toEqual(before);
    expect(await app.order(orderId)).toMatchObject({ status: 'RESERVED' });
  });

  it('a released order cannot be paid', async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    await app.releaseOrder.cancel('alice', orderId, 'cancel-1');

    await expect(app.payOrder.execute('alice', orderId, 'pay-1')).rejects.toBeInstanceOf(
      IllegalOrderTransition,
    );
    expect(await app.order(orderId)).toMatchObject({ status: 'RELEASED' });
  });

  it("another user's order is answered as not found, and stays unpaid", async () => {
    app = await startApp();
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    const before = app.writes();

    await expect(app.payOrder.execute('mallory', orderId, 'pay-1')).rejects.toBeInstanceOf(OrderNotFound);
    await expect(app.payOrder.execute('alice', 'order-9999', 'pay-2')).rejects.toBeInstanceOf(OrderNotFound);

    expect(app.writes()).toEqual(before);
    expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
  });
});
