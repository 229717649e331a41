import { afterEach, describe, expect, it } from '@jest/globals';
import { compensationMessageId, OutboxStatus } from '../../../src/application/index.js';
import { IllegalOrderTransition, OrderNotFound, orderStreamId } from '../../../src/domain/index.js';
import { type AppHarness, MINUTE, startApp } from '../../support/app-harness.js';

describe('ReleaseOrder', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  describe('cancel by the buyer', () => {
    it('of a RESERVED order: MySQL is left alone, the gate gets the unit back, the commit skips it', async () => {
      app = await startApp({ consumers: false });
      const productId = await app.listProduct({ stock: 5 });
      const orderId = await app.mustBuy('alice', productId);

      const view = await app.releaseOrder.cancel('alice', orderId, 'cancel-1');

      expect(view).toMatchObject({ orderId, status: 'RELEASED', reason: 'CANCELLED' });
      expect((await app.streamEvents(orderStreamId(orderId))).at(-1)).toMatchObject({
        type: 'ReservationReleased',
        data: { reason: 'CANCELLED', stockWasCommitted: false },
      });
      expect(await app.mysqlStock(productId)).toBe(5);

      await app.startConsumers();
      await app.drained();

      expect(await app.order(orderId)).toMatchObject({ status: 'RELEASED', reason: 'CANCELLED' });
      expect(await app.mysqlStock(productId)).toBe(5);
      expect(await app.gate.stockLeft(productId)).toBe(5);
      expect((await app.reservedRow(orderId)).status).toBe(OutboxStatus.CONSUMED);
      expect((await app.outboxRow(compensationMessageId(orderId))).status).toBe(OutboxStatus.CONSUMED);
    });

    it('of a COMMITTED order: the stock goes back to MySQL in the same transaction, to the gate after', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 5 });
      const orderId = await app.mustBuy('alice', productId, 2);
      await app.drained();
      expect(await app.mysqlStock(productId)).toBe(3);

      const view = await app.releaseOrder.cancel('alice', orderId, 'cancel-1');

      expect(view).toMatchObject({ status: 'RELEASED', reason: 'CANCELLED' });
      expect(await app.mysqlStock(productId)).toBe(5);
      expect((await app.streamEvents(orderStreamId(orderId))).at(-1)).toMatchObject({
        type: 'ReservationReleased',
        data: { stockWasCommitted: true, quantity: 2 },
      });

      await app.drained();

      expect(await app.gate.stockLeft(productId)).toBe(5);
      expect((await app.gate.held(productId)).has(orderId)).toBe(false);
      expect(await app.buy('alice', productId, 2)).toMatchObject({ ok: true });
    });

    it('by another user: answered as not found, and nothing changes', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 5 });
      const orderId = await app.mustBuy('alice', productId);
      await app.drained();
      const before = app.writes();

      await expect(app.releaseOrder.cancel('mallory', orderId, 'cancel-1')).rejects.toBeInstanceOf(
        OrderNotFound,
      );
      await expect(app.releaseOrder.cancel('alice', 'order-9999', 'cancel-2')).rejects.toBeInstanceOf(
        OrderNotFound,
      );

      expect(app.writes()).toEqual(before);
      expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
      expect(await app.mysqlStock(productId)).toBe(4);
    });

    it('of a PAID order is refused with IllegalOrderTransition, and nothing changes', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 5 });
      const orderId = await app.mustBuy('alice', productId);
      await app.drained();
      await app.payOrder.execute('alice', orderId, 'pay-1');
      const before = app.writes();

      await expect(app.releaseOrder.cancel('alice', orderId, 'cancel-1')).rejects.toBeInstanceOf(
        IllegalOrderTransition,
      );

      expect(app.writes()).toEqual(before);
      expect(await app.order(orderId)).toMatchObject({ status: 'PAID' });
      expect(await app.mysqlStock(productId)).toBe(4);
    });

    it('repeated, is one cancellation: stock comes back once, one compensation', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 5 });
      const orderId = await app.mustBuy('alice', productId);
      await app.drained();
      const first = await app.releaseOrder.cancel('alice', orderId, 'cancel-1');
      const after = app.writes();

      const again = [
        await app.releaseOrder.cancel('alice', orderId, 'cancel-2'),
        await app.releaseOrder.cancel('alice', orderId, 'cancel-3'),
      ];
      await app.drained();

      for (const view of again) expect(view).toMatchObject({ status: first.status, reason: first.reason });
      expect(app.writes()).toEqual(after);
      expect(await app.mysqlStock(productId)).toBe(5);
      expect(await app.gate.stockLeft(productId)).toBe(5);
      expect(app.gate.restoreCalls).toBe(1);
    });
  });

  describe('releaseExpired', () => {
    it('releases only unpaid COMMITTED orders older than the payment timeout; the unit can be bought again', async () => {
      app = await startApp({ paymentTimeoutMs: 15 * MINUTE });
      const productId = await app.listProduct({ stock: 3, perUserLimit: 1, maxPerOrder: 1 });
      const unpaid = await app.mustBuy('alice', productId);
      const paid = await app.mustBuy('bob', productId);
      await app.drained();
      await app.payOrder.execute('bob', paid, 'pay-1');
      app.clock.advance(10 * MINUTE);
      const recent = await app.mustBuy('carol', productId);
      await app.drained();
      expect(await app.buy('dave', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

      app.clock.advance(5 * MINUTE);
      expect(await app.releaseOrder.releaseExpired()).toBe(0);
      app.clock.advance(1);
      expect(await app.releaseOrder.releaseExpired()).toBe(1);

      expect(await app.order(unpaid)).toMatchObject({ status: 'RELEASED', reason: 'PAYMENT_TIMEOUT' });
      expect(await app.order(paid)).toMatchObject({ status: 'PAID' });
      expect(await app.order(recent)).toMatchObject({ status: 'COMMITTED' });
      expect(await app.mysqlStock(productId)).toBe(1);
      expect(await app.releaseOrder.releaseExpired()).toBe(0);

      await app.drained();
      const next = await app.mustBuy('dave', productId);
      await app.drained();
      expect(await app.order(next)).toMatchObject({ status: 'COMMITTED' });
      expect(await app.mysqlStock(productId)).toBe(0);
    });

    it('never releases PAID orders, however old, nor reservations MySQL has not committed', async () => {
      app = await startApp({ consumers: false });
      const productId = await app.listProduct({ stock: 3 });
      const reserved = await app.mustBuy('alice', productId);
      app.clock.advance(24 * 60 * MINUTE);

      expect(await app.releaseOrder.releaseExpired()).toBe(0);
      expect(await app.order(reserved)).toMatchObject({ status: 'RESERVED' });

      await app.startConsumers();
      await app.drained();
      await app.payOrder.execute('alice', reserved, 'pay-1');
      app.clock.advance(24 * 60 * MINUTE);

      expect(await app.releaseOrder.releaseExpired()).toBe(0);
      expect(await app.order(reserved)).toMatchObject({ status: 'PAID' });
    });
  });
});
