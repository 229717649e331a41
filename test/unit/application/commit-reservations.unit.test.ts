import { afterEach, describe, expect, it } from '@jest/globals';
import {
  compensationMessageId,
  type InboundMessage,
  OutboxStatus,
  Topics,
} from '../../../src/application/index.js';
import { orderStreamId } from '../../../src/domain/index.js';
import { type AppHarness, buyers, type HarnessOptions, startApp } from '../../support/app-harness.js';

describe('CommitReservations', () => {
  const apps: AppHarness[] = [];
  const start = async (options: HarnessOptions = {}) => {
    const app = await startApp(options);
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  /** The reserved messages on the bus, once every publish started so far has gone out. */
  const reservedMessages = async (app: AppHarness): Promise<readonly InboundMessage[]> => {
    await app.dispatcher.settle();
    return app.bus.messages(Topics.ORDERS_RESERVED);
  };

  it('a redelivered batch is skipped: MySQL stock goes down once per order', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 10 });
    const orderIds = [await app.mustBuy('alice', productId, 2), await app.mustBuy('bob', productId)];
    await app.drained();
    expect(await app.mysqlStock(productId)).toBe(7);
    const before = app.writes();

    await app.commit.handle(app.bus.messages(Topics.ORDERS_RESERVED));
    await app.commit.handle(app.bus.messages(Topics.ORDERS_RESERVED));
    await app.drained();

    expect(await app.mysqlStock(productId)).toBe(7);
    expect(app.writes()).toEqual(before);
    for (const orderId of orderIds) {
      expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
      expect((await app.streamEvents(orderStreamId(orderId))).map((e) => e.type)).toEqual([
        'OrderReserved',
        'StockCommitted',
      ]);
    }
    expect(app.metrics.total('orders_committed')).toBe(2);
  });

  it('orders beyond MySQL stock are released SOLD_OUT and their compensation gives the gate back', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 3, perUserLimit: 1, maxPerOrder: 1 });
    await app.gate.warm(productId, 5, { force: true });
    const orderIds: string[] = [];
    for (const user of buyers(5)) orderIds.push(await app.mustBuy(user, productId));

    await app.drained();

    const statuses = await Promise.all(orderIds.map(async (id) => (await app.order(id)).status));
    expect(statuses).toEqual(['COMMITTED', 'COMMITTED', 'COMMITTED', 'RELEASED', 'RELEASED']);
    for (const orderId of orderIds.slice(3)) {
      expect(await app.order(orderId)).toMatchObject({ reason: 'SOLD_OUT' });
      expect((await app.streamEvents(orderStreamId(orderId))).at(-1)).toMatchObject({
        type: 'ReservationReleased',
        data: { reason: 'SOLD_OUT', stockWasCommitted: false },
      });
      expect((await app.outboxRow(compensationMessageId(orderId))).status).toBe(OutboxStatus.CONSUMED);
    }
    expect(await app.mysqlStock(productId)).toBe(0);
    // the two released units are back in the gate, and no longer held for their orders
    expect(await app.gate.stockLeft(productId)).toBe(2);
    expect([...(await app.gate.held(productId)).keys()]).toEqual(orderIds.slice(0, 3));
    expect(app.metrics.total('orders_released', { reason: 'SOLD_OUT' })).toBe(2);
    // the released buyers' quota is back too
    expect(await app.buy('user-4', productId)).toMatchObject({ ok: true });
  });

  it('re-checks the per-user limit: a buyer the gate forgot about is released LIMIT_EXCEEDED', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 10, perUserLimit: 2, maxPerOrder: 2 });
    const kept = await app.mustBuy('alice', productId, 2);
    await app.drained();
    // Redis restarts empty: the rebuilt gate no longer knows what alice holds
    app.memoryGate.forget(productId);
    await app.reconcile.run();
    expect(await app.gate.stockLeft(productId)).toBe(8);

    const extra = await app.mustBuy('alice', productId, 1);
    await app.drained();

    expect(await app.order(kept)).toMatchObject({ status: 'COMMITTED' });
    expect(await app.order(extra)).toMatchObject({ status: 'RELEASED', reason: 'LIMIT_EXCEEDED' });
    expect(await app.mysqlStock(productId)).toBe(8);
    expect(await app.gate.stockLeft(productId)).toBe(8);
    expect(app.metrics.total('orders_released', { reason: 'LIMIT_EXCEEDED' })).toBe(1);
  });

  it('two orders of one buyer in one batch are counted together against the limit', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 10, perUserLimit: 2, maxPerOrder: 2 });
    await app.mustBuy('alice', productId, 1);
    app.memoryGate.forget(productId);
    await app.gate.warm(productId, 9);
    await app.mustBuy('alice', productId, 2);

    await app.startConsumers();
    await app.drained();

    expect(await app.order('order-0001')).toMatchObject({ status: 'COMMITTED' });
    expect(await app.order('order-0002')).toMatchObject({ status: 'RELEASED', reason: 'LIMIT_EXCEEDED' });
    expect(await app.mysqlStock(productId)).toBe(9);
  });

  describe('merged and one-by-one decrements', () => {
    type Outcome = Readonly<{
      statuses: Record<string, string>;
      mysqlStock: number;
      gateStock: number | null;
      rowVersion: number;
    }>;

    /** One batch of orders for one product, decided with or without merging the decrements. */
    const decideOneBatch = async (
      mergeDecrements: boolean,
      mysqlStock: number,
      quantities: readonly number[],
    ): Promise<Outcome> => {
      const app = await start({ consumers: false, mergeDecrements });
      const productId = await app.listProduct({ stock: mysqlStock, perUserLimit: 2, maxPerOrder: 2 });
      await app.gate.warm(productId, 100, { force: true });
      const orderIds: string[] = [];
      for (const [i, quantity] of quantities.entries())
        orderIds.push(await app.mustBuy(`user-${i + 1}`, productId, quantity));
      const versionBefore = (await app.inventory.get(productId))?.version ?? Number.NaN;
      // every reservation on the bus before the consumer starts: it gets them as one batch, whatever the
      // publisher's linger and the machine's load
      await app.dispatcher.settle();

      await app.startConsumers();
      await app.drained();

      const statuses: Record<string, string> = {};
      for (const id of orderIds) {
        const view = await app.order(id);
        statuses[id] = view.reason ? `${view.status} ${view.reason}` : view.status;
      }
      return {
        statuses,
        mysqlStock: await app.mysqlStock(productId),
        gateStock: await app.gate.stockLeft(productId),
        rowVersion: ((await app.inventory.get(productId))?.version ?? Number.NaN) - versionBefore,
      };
    };

    it('give the same outcome when the batch fits, merged in one UPDATE of the hot row', async () => {
      const merged = await decideOneBatch(true, 10, [2, 2, 1]);
      const oneByOne = await decideOneBatch(false, 10, [2, 2, 1]);

      expect(merged.statuses).toEqual(oneByOne.statuses);
      expect(Object.values(merged.statuses)).toEqual(['COMMITTED', 'COMMITTED', 'COMMITTED']);
      expect(merged.mysqlStock).toBe(5);
      expect(oneByOne.mysqlStock).toBe(5);
      expect(merged.gateStock).toBe(oneByOne.gateStock);
      expect(merged.rowVersion).toBe(1);
      expect(oneByOne.rowVersion).toBe(3);
    });

    it('give the same outcome when the batch does not fit, falling back to one by one in order', async () => {
      const merged = await decideOneBatch(true, 5, [2, 2, 2, 1, 1]);
      const oneByOne = await decideOneBatch(false, 5, [2, 2, 2, 1, 1]);

      expect(merged).toEqual(oneByOne);
      expect(Object.values(merged.statuses)).toEqual([
        'COMMITTED',
        'COMMITTED',
        'RELEASED SOLD_OUT',
        'COMMITTED',
        'RELEASED SOLD_OUT',
      ]);
      expect(merged.mysqlStock).toBe(0);
      expect(merged.gateStock).toBe(100 - 8 + 3);
    });
  });

  it.each([true, false])(
    'a message twice in one batch is decided once (mergeDecrements %s)',
    async (mergeDecrements) => {
      const app = await start({ consumers: false, mergeDecrements });
      const productId = await app.listProduct({ stock: 1 });
      const orderId = await app.mustBuy('alice', productId);
      const [message] = await reservedMessages(app);
      if (!message) throw new Error('the reservation was not published');

      await app.commit.handle([message, message]);

      expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
      expect(await app.mysqlStock(productId)).toBe(0);
      expect((await app.streamEvents(orderStreamId(orderId))).map((e) => e.type)).toEqual([
        'OrderReserved',
        'StockCommitted',
      ]);
      expect(app.db.outbox.size).toBe(1);
    },
  );

  it('every reserved outbox row ends CONSUMED, released or committed', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 4, perUserLimit: 1, maxPerOrder: 1 });
    await app.gate.warm(productId, 6, { force: true });
    const orderIds: string[] = [];
    for (const user of buyers(6)) orderIds.push(await app.mustBuy(user, productId));

    await app.drained();

    for (const orderId of orderIds)
      expect((await app.reservedRow(orderId)).status).toBe(OutboxStatus.CONSUMED);
    expect(await app.outbox.countByStatus()).toMatchObject({
      [OutboxStatus.CONSUMED]: 8,
      [OutboxStatus.PENDING]: 0,
      [OutboxStatus.SENT]: 0,
    });
  });

  it('a batch whose transaction fails is delivered again and then decided once', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 5 });
    const orderIds = [await app.mustBuy('alice', productId), await app.mustBuy('bob', productId)];
    app.unitOfWork.failNext();

    await app.startConsumers();
    await app.drained();

    for (const orderId of orderIds) expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
    expect(await app.mysqlStock(productId)).toBe(3);
    expect(app.logger.entries.some((e) => e.message === 'batch failed; redelivering')).toBe(true);
  });

  it('an unreadable message is skipped without holding back the others', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    const [message] = await reservedMessages(app);
    if (!message) throw new Error('the reservation was not published');

    await app.commit.handle([{ ...message, payload: '{"not":"a reservation"}', offset: '99' }, message]);

    expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
    expect(app.logger.entries.filter((e) => e.level === 'error').map((e) => e.message)).toEqual([
      'unreadable reservation message skipped',
    ]);
  });
});
