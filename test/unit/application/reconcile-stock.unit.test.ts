import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type InboundMessage,
  type BuyerOrdersQuery,
  type OrderReadModel,
  type OrderView,
  ReconcileStock,
  type StatusTally,
  StockBooksReader,
  Topics,
  type UnitOfWork,
} from '../../../src/application/index.js';
import { type DomainEvent, type OrderStatus, productStreamId } from '../../../src/domain/index.js';
import { type AppHarness, buyers, type HarnessOptions, startApp } from '../../support/app-harness.js';

describe('ReconcileStock', () => {
  const apps: AppHarness[] = [];
  const start = async (options: HarnessOptions = {}) => {
    const app = await startApp(options);
    apps.push(app);
    return app;
  };
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  const reconciliations = async (app: AppHarness, productId: number): Promise<DomainEvent[]> =>
    (await app.streamEvents(productStreamId(productId))).filter((e) => e.type === 'StockReconciled');

  /** Places one order per buyer and returns the answers' codes: RESERVED or the rejection. */
  const crowd = async (app: AppHarness, productId: number, users: readonly string[]): Promise<string[]> => {
    const answers: string[] = [];
    for (const user of users) {
      const result = await app.buy(user, productId);
      answers.push(result.ok ? result.status : result.code);
    }
    return answers;
  };

  /** A buyer's committed order, cancelled; the gate acknowledges its restore and loses it, as a failover may. */
  const cancelledWithRestoreLost = async (
    app: AppHarness,
    buyer: string,
    productId: number,
  ): Promise<void> => {
    const orderId = await app.mustBuy(buyer, productId);
    await app.drained();
    app.gate.loseRestores = true;
    await app.releaseOrder.cancel(buyer, orderId, `cancel-${orderId}`);
    await app.drained();
    app.gate.loseRestores = false;
  };

  /** Records a reservation the gate took, as the order path's transaction does. */
  const recordReservation = (app: AppHarness, productId: number, orderId: string, userId: string) => {
    const now = app.clock.now();
    return app.commands.orders.write((tx) =>
      tx.decide([
        {
          command: { type: 'ReserveOrder', orderId, productId, userId, quantity: 1, now },
          context: { occurredAt: now, correlationId: orderId, causationId: orderId, userId },
          isNew: true,
        },
      ]),
    );
  };

  const releasedSoldOut = async (app: AppHarness, productId: number): Promise<number> =>
    (await app.orders.findByProduct(productId, ['RELEASED'])).filter((o) => o.reason === 'SOLD_OUT').length;

  it('takes back units a gate drifted up to, with DECRBY, and records it', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 10 });
    await app.mustBuy('alice', productId, 2);
    await app.drained();
    await app.gate.adjust(productId, 5);

    const report = await app.reconcile.run();

    expect(report.products).toEqual([
      expect.objectContaining({ productId, drift: 5, action: 'ADJUSTED', gateStock: 13, gateAfter: 8 }),
    ]);
    expect(await app.gate.stockLeft(productId)).toBe(8);
    expect(await reconciliations(app, productId)).toEqual([
      {
        type: 'StockReconciled',
        data: {
          productId,
          gateBefore: 13,
          gateAfter: 8,
          mysqlStock: 8,
          inFlight: 0,
          reconciledAt: report.finishedAt,
        },
      },
    ]);
    expect(app.metrics.total('reconciliation_fixes')).toBe(1);
    expect((await app.audit.run()).ok).toBe(true);
  });

  it('gives back units a gate drifted down to, with INCRBY, and clears the sold-out flag', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 3 });
    await app.gate.adjust(productId, -3);
    expect(await app.buy('alice', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ drift: -3, action: 'ADJUSTED', gateAfter: 3 });
    expect(await app.gate.stockLeft(productId)).toBe(3);
    expect(await reconciliations(app, productId)).toHaveLength(1);
    expect(app.soldOut.isSoldOut(productId)).toBe(false);
    expect(await app.buy('alice', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
  });

  it('gives back the unit of a failed order whose gate restore failed too, and the buyer may order again', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 5, perUserLimit: 1, maxPerOrder: 1 });
    app.unitOfWork.failNext();
    app.gate.failRestores = true;
    await expect(app.buy('alice', productId)).rejects.toThrow('database unavailable');
    app.gate.failRestores = false;
    expect(await app.gate.stockLeft(productId)).toBe(4);
    // the gate still counts alice's unit against her limit
    expect(await app.buy('alice', productId)).toMatchObject({ ok: false, code: 'LIMIT_EXCEEDED' });

    const report = await app.reconcile.run();

    // given back by its orderId, with alice's count: nothing else drifted
    expect(report.products[0]).toMatchObject({ restored: 1, drift: 0, action: 'IN_STEP', gateAfter: 5 });
    expect(await app.gate.stockLeft(productId)).toBe(5);
    expect(app.metrics.total('reconciliation_restores')).toBe(1);
    expect(await app.buy('alice', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
    expect((await app.reconcile.run()).products[0]).toMatchObject({ restored: 0, action: 'IN_STEP' });
  });

  it("gives back a reservation whose commit went unanswered and never landed; the buyer's repeat with its key is a new order", async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 2, perUserLimit: 1, maxPerOrder: 1 });
    const click = () =>
      app.placeOrder.execute({
        userId: 'alice',
        productId,
        quantity: 1,
        correlationId: 'c',
        idempotencyKey: 'k-1',
      });
    app.unitOfWork.commitUnanswered(false);
    await expect(click()).rejects.toThrow('no answer to the commit');
    const [lost] = [...(await app.gate.held(productId)).keys()];

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ restored: 1, drift: 0, action: 'IN_STEP', gateAfter: 2 });
    // answered from the key, the repeat would record the lost order with a unit given back: it is a new one
    const repeat = await click();
    expect(repeat).toMatchObject({ ok: true, status: 'RESERVED' });
    expect(repeat.ok && repeat.orderId).not.toBe(lost);
    expect(await app.buy('bob', productId)).toMatchObject({ ok: true });
    expect(await app.buy('carol', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    await app.drained();
    expect(await app.orders.findByProduct(productId, ['COMMITTED'])).toHaveLength(2);
    expect(await releasedSoldOut(app, productId)).toBe(0);
    expect(await app.orders.get(lost!)).toBeNull();
    expect((await app.audit.run()).ok).toBe(true);
  });

  it('gives back a reservation MySQL lacks only once its transaction can no longer commit, and not if it landed', async () => {
    const app = await start({ settleMs: 500 });
    const productId = await app.listProduct({ stock: 5 });
    await app.gate.reserve({ productId, orderId: 'late', userId: 'bob', quantity: 1, perUserLimit: 2 });
    const started = Date.parse(app.clock.now());
    // the transaction lands in the last moment of its deadline, after the second reading
    const sleeps: number[] = [];
    app.clock.onSleep = async (ms) => {
      sleeps.push(ms);
      if (sleeps.length === 2) await recordReservation(app, productId, 'late', 'bob');
    };

    const report = await app.reconcile.run();

    // from the first reading: the group commit's wait (1 ms here) and the transaction's deadline (3 s)
    expect(sleeps).toEqual([500, 2_501]);
    expect(Date.parse(report.finishedAt) - started).toBe(3_001);
    expect(report.products[0]).toMatchObject({ restored: 0, drift: 0, action: 'IN_STEP', gateAfter: 4 });
    expect(await app.gate.held(productId)).toEqual(new Map([['late', 1]]));
  });

  it('gives back a restore the gate lost (acknowledged, then dropped by a failover): the unit is for sale again', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 1 });
    await cancelledWithRestoreLost(app, 'alice', productId);
    // MySQL has the unit back; the gate still holds it for a release whose message has been consumed
    expect(await app.inventory.get(productId)).toMatchObject({ stock: 1 });
    expect(await app.buy('bob', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ restored: 1, drift: 0, action: 'IN_STEP', gateAfter: 1 });
    expect(await app.gate.stockLeft(productId)).toBe(1);
    expect(app.metrics.total('reconciliation_restores')).toBe(1);
    expect(app.soldOut.isSoldOut(productId)).toBe(false);
    expect(await app.buy('bob', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
    await app.drained();
    expect((await app.audit.run()).ok).toBe(true);
    // given back once: the next run finds nothing to restore
    expect((await app.reconcile.run()).products[0]).toMatchObject({ restored: 0, action: 'IN_STEP' });
  });

  it('gives back a lost restore and takes back a lost decrement in one run, leaving the gate as MySQL has it', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 3 });
    await cancelledWithRestoreLost(app, 'alice', productId);
    // a reservation the failover dropped: the gate has the unit again, and MySQL sold it
    await app.mustBuy('bob', productId);
    await app.drained();
    await app.gate.adjust(productId, 1);

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ restored: 1, drift: 1, action: 'ADJUSTED', gateAfter: 2 });
    expect(await app.gate.stockLeft(productId)).toBe(2);
    expect((await app.inventory.get(productId))?.stock).toBe(2);
    expect((await app.audit.run()).ok).toBe(true);
  });

  it('changes nothing while reservations are in flight: the gate already counts them', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 50, perUserLimit: 1, maxPerOrder: 1 });
    expect(await crowd(app, productId, buyers(30))).toEqual(Array(30).fill('RESERVED'));

    const report = await app.reconcile.run();

    expect(report.products).toEqual([
      {
        productId,
        mysqlStock: 50,
        gateStock: 20,
        inFlight: 30,
        releasedNotRestored: 0,
        expectedGate: 20,
        drift: 0,
        action: 'IN_STEP',
        gateAfter: 20,
        restored: 0,
      },
    ]);
    expect(await app.gate.stockLeft(productId)).toBe(20);
    expect(await reconciliations(app, productId)).toEqual([]);

    await app.startConsumers();
    await app.drained();
    expect(await app.mysqlStock(productId)).toBe(20);
    expect(await app.gate.stockLeft(productId)).toBe(20);
    expect((await app.reconcile.run()).products[0]).toMatchObject({ action: 'IN_STEP' });
  });

  it('while reservations are in flight, corrects only the drift, not up to MySQL stock', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 50, perUserLimit: 1, maxPerOrder: 1 });
    await crowd(app, productId, buyers(30));
    await app.gate.adjust(productId, -2);

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ drift: -2, action: 'ADJUSTED', gateAfter: 20 });
    await app.startConsumers();
    await app.drained();
    expect(await app.mysqlStock(productId)).toBe(20);
    expect(await app.gate.stockLeft(productId)).toBe(20);
    expect(await releasedSoldOut(app, productId)).toBe(0);
  });

  it('leaves a gate alone when its drift changed between the two readings (UNSETTLED)', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 10 });
    await app.gate.adjust(productId, 3);
    // another hand on the gate while the reconciler waits
    app.clock.onSleep = async () => {
      await app.gate.adjust(productId, 1);
    };

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ action: 'UNSETTLED', gateAfter: 14 });
    expect(await app.gate.stockLeft(productId)).toBe(14);
    expect(await reconciliations(app, productId)).toEqual([]);
    expect(app.metrics.total('reconciliation_fixes')).toBe(0);
  });

  it('tells a buyer passing the gate between its readings from a drift, by orderId', async () => {
    const app = await start();
    const productId = await app.listProduct({ stock: 10 });
    await app.gate.adjust(productId, 3);
    // a buyer passes the gate while the reconciler waits; the order is not in MySQL yet
    app.clock.onSleep = async () => {
      await app.gate.reserve({
        productId,
        orderId: 'mid-flight',
        userId: 'bob',
        quantity: 1,
        perUserLimit: 2,
      });
    };

    const report = await app.reconcile.run();

    // the 3 units of drift taken back; bob's unit stays taken
    expect(report.products[0]).toMatchObject({ drift: 3, action: 'ADJUSTED', gateAfter: 9 });
    expect(await app.gate.stockLeft(productId)).toBe(9);
  });

  it('under steady traffic, the same number of buyers between the gate and MySQL at both readings is no drift', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 16, perUserLimit: 1, maxPerOrder: 1 });
    const passGate = async (from: number) => {
      for (let i = from; i < from + 8; i += 1)
        await app.gate.reserve({
          productId,
          orderId: `o${i}`,
          userId: `b${i}`,
          quantity: 1,
          perUserLimit: 1,
        });
    };
    // eight buyers between the gate and MySQL at each reading, never the same eight
    await passGate(0);
    app.clock.onSleep = async () => {
      for (let i = 0; i < 8; i += 1) await recordReservation(app, productId, `o${i}`, `b${i}`);
      await passGate(8);
    };

    const report = await app.reconcile.run();

    // counted alone, the gate looks 8 units low at both readings; an INCRBY of 8 would offer 24 units for 16
    expect(report.products[0]).toMatchObject({ gateStock: 0, drift: 0, action: 'IN_STEP', gateAfter: 0 });
    expect(await app.buy('late-comer', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    app.clock.onSleep = null;
    for (let i = 8; i < 16; i += 1) await recordReservation(app, productId, `o${i}`, `b${i}`);
    await app.startConsumers();
    await app.drained();
    expect(await app.orders.findByProduct(productId, ['COMMITTED'])).toHaveLength(16);
    expect(await releasedSoldOut(app, productId)).toBe(0);
    expect((await app.audit.run()).ok).toBe(true);
  });

  it('waits a settle interval between its two readings', async () => {
    const app = await start({ settleMs: 2_000 });
    await app.listProduct({ stock: 10 });

    const report = await app.reconcile.run();

    expect(Date.parse(report.finishedAt) - Date.parse(report.startedAt)).toBe(2_000);
  });

  it('rebuilds a lost gate to MySQL stock minus what is in flight', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 20, perUserLimit: 1, maxPerOrder: 1 });
    await crowd(app, productId, buyers(5));
    app.memoryGate.forget(productId);
    await expect(app.buy('late', productId)).rejects.toThrow('stock gate unavailable');

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({
      gateStock: null,
      inFlight: 5,
      action: 'REBUILT',
      gateAfter: 15,
    });
    expect(await app.gate.stockLeft(productId)).toBe(15);
    expect(await reconciliations(app, productId)).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ gateBefore: null, gateAfter: 15, mysqlStock: 20 }),
      }),
    ]);

    await app.startConsumers();
    await app.drained();
    expect(await app.mysqlStock(productId)).toBe(15);
    expect(await app.gate.stockLeft(productId)).toBe(15);
    expect(await app.buy('late', productId)).toMatchObject({ ok: true });
  });

  it('does not rebuild a lost gate while what is in flight changes under it', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 20 });
    const orderId = await app.mustBuy('alice', productId);
    app.memoryGate.forget(productId);
    app.clock.onSleep = async () => {
      await app.releaseOrder.cancel('alice', orderId, 'cancel-1');
    };

    const report = await app.reconcile.run();

    expect(report.products[0]).toMatchObject({ action: 'UNSETTLED', gateAfter: null });
    expect(await app.gate.stockLeft(productId)).toBeNull();
  });

  describe('why it never copies MySQL stock into the gate', () => {
    const soldOutWithTenInFlight = async () => {
      const app = await start({ consumers: false });
      const productId = await app.listProduct({ stock: 10, perUserLimit: 1, maxPerOrder: 1 });
      expect(await crowd(app, productId, buyers(10, 'first'))).toEqual(Array(10).fill('RESERVED'));
      return { app, productId };
    };

    it('the naive SET would let more buyers through the gate than MySQL can commit', async () => {
      const { app, productId } = await soldOutWithTenInFlight();

      await app.gate.warm(productId, await app.mysqlStock(productId), { force: true });
      const second = await crowd(app, productId, buyers(10, 'second'));
      await app.startConsumers();
      await app.drained();

      expect(second).toEqual(Array(10).fill('RESERVED'));
      expect(await app.mysqlStock(productId)).toBe(0);
      expect(await app.orders.findByProduct(productId, ['COMMITTED'])).toHaveLength(10);
      // ten buyers were told RESERVED and then lost their order
      expect(await releasedSoldOut(app, productId)).toBe(10);
    });

    it('reconciliation in the same state keeps the gate shut, and every accepted buyer is committed', async () => {
      const { app, productId } = await soldOutWithTenInFlight();

      await app.reconcile.run();
      const second = await crowd(app, productId, buyers(10, 'second'));
      await app.startConsumers();
      await app.drained();

      expect(second).toEqual(Array(10).fill('SOLD_OUT'));
      expect(await app.orders.findByProduct(productId, ['COMMITTED'])).toHaveLength(10);
      expect(await releasedSoldOut(app, productId)).toBe(0);
      expect((await app.audit.run()).ok).toBe(true);
    });
  });

  /**
   * Lets a test run something while readStockBooks reads the orders, as a real MySQL round trip allows: here,
   * the commit consumer's transaction tries to land between the reads of the stock and of the orders.
   */
  class InterleavingReadModel implements OrderReadModel {
    constructor(
      private readonly inner: OrderReadModel,
      private readonly beforeReservedRead: () => Promise<void>,
    ) {}

    upsert(order: OrderView): Promise<void> {
      return this.inner.upsert(order);
    }

    upsertMany(orders: readonly OrderView[]): Promise<void> {
      return this.inner.upsertMany(orders);
    }

    get(orderId: string): Promise<OrderView | null> {
      return this.inner.get(orderId);
    }

    getMany(orderIds: readonly string[]): Promise<Map<string, OrderView>> {
      return this.inner.getMany(orderIds);
    }

    unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number> {
      return this.inner.unitsHeld(userId, productId, statuses);
    }

    unitsHeldByUsers(
      userIds: readonly string[],
      productId: number,
      statuses: readonly OrderStatus[],
    ): Promise<Map<string, number>> {
      return this.inner.unitsHeldByUsers(userIds, productId, statuses);
    }

    findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]> {
      return this.inner.findByStatus(status, updatedBefore, limit);
    }

    tally(productId: number): Promise<StatusTally[]> {
      return this.inner.tally(productId);
    }

    listByBuyer(userId: string, query: BuyerOrdersQuery): Promise<OrderView[]> {
      return this.inner.listByBuyer(userId, query);
    }

    async findByProduct(productId: number, statuses: readonly OrderStatus[]): Promise<OrderView[]> {
      if (statuses.includes('RESERVED')) await this.beforeReservedRead();
      return this.inner.findByProduct(productId, statuses);
    }
  }

  it('commits landing between its reads do not make it re-open sold stock', async () => {
    const app = await start({ consumers: false });
    const productId = await app.listProduct({ stock: 10, perUserLimit: 1, maxPerOrder: 1 });
    await crowd(app, productId, buyers(5, 'first'));
    await app.dispatcher.settle();
    const pending: InboundMessage[] = [...app.bus.messages(Topics.ORDERS_RESERVED)];
    const landed: Promise<void>[] = [];
    // the commit gets one turn of the event loop to land; a reader that isolates its reads holds it back
    const commitOne = async () => {
      const next = pending.shift();
      if (!next) return;
      const commit = app.commit.handle([next]);
      landed.push(commit);
      await Promise.race([commit, new Promise<void>((resolve) => setImmediate(resolve))]);
    };
    const interleaving: UnitOfWork = {
      run: (work) =>
        app.unitOfWork.run((stores) =>
          work({ ...stores, orders: new InterleavingReadModel(stores.orders, commitOne) }),
        ),
    };
    const reconcile = new ReconcileStock({
      products: app.commands.products,
      inventory: app.inventory,
      orders: app.orders,
      books: new StockBooksReader({ gate: app.gate, unitOfWork: interleaving }),
      gate: app.gate,
      soldOut: app.soldOut,
      clock: app.clock,
      ids: app.eventIds,
      logger: app.logger,
      metrics: app.metrics,
      settleMs: 2_000,
      recordDeadlineMs: 3_000,
    });

    await reconcile.run();
    await Promise.all(landed);

    // MySQL 8 with 3 still in flight: the gate must not offer more than 5
    expect(await app.mysqlStock(productId)).toBe(8);
    expect(await app.gate.stockLeft(productId)).toBeLessThanOrEqual(5);
    await crowd(app, productId, buyers(6, 'second'));
    await app.startConsumers();
    await app.drained();
    expect(await releasedSoldOut(app, productId)).toBe(0);
  });
});
