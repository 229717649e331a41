import { afterEach, describe, expect, it } from '@jest/globals';
import {
  InfrastructureUnavailable,
  OutboxStatus,
  reservedMessageId,
  Topics,
} from '../../../src/application/index.js';
import { orderStreamId } from '../../../src/domain/index.js';
import {
  type AppHarness,
  MINUTE,
  SALE_OPENS,
  startApp,
  type HarnessOptions,
} from '../../support/app-harness.js';

describe('PlaceOrder', () => {
  let app: AppHarness;
  const start = async (options: HarnessOptions = {}) => {
    app = await startApp(options);
    return app;
  };
  afterEach(() => app.close());

  describe('an accepted order', () => {
    it('answers RESERVED and records the event, the order view and the outbox row in one go', async () => {
      const { listProduct, buy, streamEvents, order, reservedRow, gate } = await start({ consumers: false });
      const productId = await listProduct({ stock: 5 });

      const result = await buy('alice', productId, 2);

      expect(result).toEqual({ ok: true, orderId: 'order-0001', status: 'RESERVED' });
      expect(await streamEvents(orderStreamId('order-0001'))).toEqual([
        {
          type: 'OrderReserved',
          data: { orderId: 'order-0001', productId, userId: 'alice', quantity: 2, reservedAt: SALE_OPENS },
        },
      ]);
      expect(await order('order-0001')).toMatchObject({
        userId: 'alice',
        productId,
        quantity: 2,
        status: 'RESERVED',
        reason: null,
      });
      const row = await reservedRow('order-0001');
      expect(row).toMatchObject({ topic: Topics.ORDERS_RESERVED, key: String(productId) });
      expect(JSON.parse(row.payload)).toMatchObject({ orderId: 'order-0001', userId: 'alice', quantity: 2 });
      expect(await gate.stockLeft(productId)).toBe(3);
    });

    it('is committed by MySQL once the pipeline has drained, and MySQL stock goes down', async () => {
      const { listProduct, mustBuy, drained, order, mysqlStock, reservedRow, gate } = await start();
      const productId = await listProduct({ stock: 5 });

      const orderId = await mustBuy('alice', productId, 2);
      await drained();

      expect(await order(orderId)).toMatchObject({ status: 'COMMITTED' });
      expect(await mysqlStock(productId)).toBe(3);
      expect(await gate.stockLeft(productId)).toBe(3);
      expect((await reservedRow(orderId)).status).toBe(OutboxStatus.CONSUMED);
    });
  });

  describe('group commit', () => {
    const buyers = Array.from({ length: 8 }, (_, i) => `buyer-${i}`);

    it('records reservations that pass the gate together in one transaction, and answers each RESERVED', async () => {
      const { listProduct, buy, unitOfWork, order, reservedRow, streamEvents, metrics } = await start({
        consumers: false,
        groupCommit: { maxBatch: buyers.length, maxWaitMs: 60_000 },
      });
      const productId = await listProduct({ stock: 20 });
      const transactionsBefore = unitOfWork.runs;

      const answers = await Promise.all(buyers.map((buyer) => buy(buyer, productId)));

      expect(unitOfWork.runs - transactionsBefore).toBe(1);
      expect(metrics.total('reservation_batches')).toBe(1);
      expect(metrics.total('reservations_recorded')).toBe(buyers.length);
      for (const [i, answer] of answers.entries()) {
        if (!answer.ok) throw new Error(`${buyers[i]} was refused: ${answer.code}`);
        expect(await order(answer.orderId)).toMatchObject({ userId: buyers[i], status: 'RESERVED' });
        expect((await streamEvents(orderStreamId(answer.orderId))).map((e) => e.type)).toEqual([
          'OrderReserved',
        ]);
        expect((await reservedRow(answer.orderId)).status).toBeDefined();
      }
    });

    it('a failed batch answers InfrastructureUnavailable to each of its buyers, gives every unit back and writes nothing', async () => {
      const { listProduct, buy, writes, gate, unitOfWork, dispatcher } = await start({
        consumers: false,
        groupCommit: { maxBatch: buyers.length, maxWaitMs: 60_000 },
      });
      const productId = await listProduct({ stock: 20, perUserLimit: 1, maxPerOrder: 1 });
      const before = writes();
      unitOfWork.failNext();

      const answers = await Promise.allSettled(buyers.map((buyer) => buy(buyer, productId)));

      for (const answer of answers) {
        expect(answer.status).toBe('rejected');
        if (answer.status === 'rejected') expect(answer.reason).toBeInstanceOf(InfrastructureUnavailable);
      }
      expect(writes()).toEqual(before);
      expect(dispatcher.busy).toBe(false);
      expect(await gate.stockLeft(productId)).toBe(20);
      expect((await gate.held(productId)).size).toBe(0);
      // each buyer's quota of one came back with the stock: their retries are accepted
      const retries = await Promise.all(buyers.map((buyer) => buy(buyer, productId)));
      expect(retries.map((r) => (r.ok ? r.status : r.code))).toEqual(buyers.map(() => 'RESERVED'));
    });
  });

  describe('sale path tokens', () => {
    const pathFor = async (userId: string, productId: number): Promise<string> => {
      const issued = await app.salePath.execute(userId, productId);
      if (!issued.ok) throw new Error(`no path for ${userId}: ${issued.code}`);
      return issued.grant.pathToken;
    };
    const buyWith = (userId: string, productId: number, pathToken?: string) =>
      app.placeOrder.execute({ userId, productId, quantity: 1, correlationId: `corr-${userId}`, pathToken });

    it("takes an order with the buyer's token for the product once, and refuses it again", async () => {
      const { listProduct, writes } = await start({ consumers: false });
      const productId = await listProduct({ requirePathToken: true });
      const token = await pathFor('alice', productId);

      expect(await buyWith('alice', productId, token)).toMatchObject({ ok: true, status: 'RESERVED' });
      const before = writes();
      expect(await buyWith('alice', productId, token)).toMatchObject({
        ok: false,
        code: 'PATH_TOKEN_INVALID',
      });
      expect(writes()).toEqual(before);
    });

    it("refuses an order without a token, with another buyer's, another product's or an expired one, writing nothing", async () => {
      const { listProduct, writes, clock, gate } = await start({ consumers: false });
      const productId = await listProduct({ requirePathToken: true });
      const otherProduct = await listProduct({ requirePathToken: true });
      const bobs = await pathFor('bob', productId);
      const forOther = await pathFor('alice', otherProduct);
      const expiring = await pathFor('alice', productId);
      clock.advance(60_000);
      const before = writes();

      expect(await buyWith('alice', productId)).toMatchObject({ ok: false, code: 'PATH_TOKEN_REQUIRED' });
      expect(await buyWith('alice', productId, bobs)).toMatchObject({
        ok: false,
        code: 'PATH_TOKEN_INVALID',
      });
      expect(await buyWith('alice', productId, forOther)).toMatchObject({
        ok: false,
        code: 'PATH_TOKEN_INVALID',
      });
      expect(await buyWith('alice', productId, expiring)).toMatchObject({
        ok: false,
        code: 'PATH_TOKEN_INVALID',
      });
      expect(writes()).toEqual(before);
      expect(await gate.stockLeft(productId)).toBe(10);
    });

    it('gives no token before the sale opens, nor for a product that does not exist', async () => {
      const { listProduct } = await start({ consumers: false });
      const productId = await listProduct({
        saleStartsAt: new Date(Date.parse(SALE_OPENS) + MINUTE).toISOString(),
      });

      expect(await app.salePath.execute('alice', productId)).toMatchObject({
        ok: false,
        code: 'SALE_NOT_ACTIVE',
      });
      expect(await app.salePath.execute('alice', 999)).toMatchObject({
        ok: false,
        code: 'PRODUCT_NOT_FOUND',
      });
    });

    it('lets a product without the requirement take orders with or without a token', async () => {
      const { listProduct } = await start({ consumers: false });
      const productId = await listProduct();

      expect(await buyWith('alice', productId)).toMatchObject({ ok: true });
    });
  });

  describe('a sold-out mark', () => {
    it('lapses, so stock that came back without its "stock back" message is sold again', async () => {
      const { listProduct, buy, gate, clock } = await start({ consumers: false });
      const productId = await listProduct({ stock: 1 });
      expect((await buy('alice', productId)).ok).toBe(true);
      expect(await buy('bob', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
      // a unit comes back to the gate, and the message that would clear the mark is lost
      await gate.adjust(productId, 1);
      expect(await buy('carol', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

      clock.advance(2_000);

      expect(await buy('carol', productId)).toMatchObject({ ok: true });
    });
  });

  describe('a rejected order writes nothing', () => {
    it('RATE_LIMITED once the buyer has used up the allowance on the product, other buyers unaffected', async () => {
      const { listProduct, buy, writes, gate, clock, placeOrder } = await start({ rateLimitPoints: 1 });
      const productId = await listProduct({ perUserLimit: 3, maxPerOrder: 1 });
      const other = await listProduct();
      expect((await buy('alice', productId)).ok).toBe(true);
      const before = writes();
      const keyed = () =>
        placeOrder.execute({
          userId: 'alice',
          productId,
          quantity: 1,
          correlationId: 'c',
          idempotencyKey: 'k-1',
        });

      const second = await keyed();

      expect(second).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
      expect((second as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
      expect(writes()).toEqual(before);
      expect(await gate.stockLeft(productId)).toBe(9);
      // blocked in process for the rest of the window: the flood of a bot costs no gate call
      const calls = gate.reserveCalls;
      expect(await buy('alice', productId)).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
      expect(gate.reserveCalls).toBe(calls);
      expect((await buy('bob', productId)).ok).toBe(true);
      // the budget is the buyer's on this product
      expect((await buy('alice', other)).ok).toBe(true);
      // the refused request kept no key and no lock: once the window has passed it is asked afresh
      clock.advance(MINUTE);
      expect(await keyed()).toEqual({ ok: true, orderId: expect.any(String), status: 'RESERVED' });
    });

    it('PRODUCT_NOT_FOUND for a product that was never listed', async () => {
      const { listProduct, buy, writes, gate } = await start();
      await listProduct();
      const before = writes();

      expect(await buy('alice', 999)).toMatchObject({ ok: false, code: 'PRODUCT_NOT_FOUND' });
      expect(writes()).toEqual(before);
      expect(gate.reserveCalls).toBe(0);
    });

    it('SALE_NOT_ACTIVE before the window opens and once it has closed, accepted inside it', async () => {
      const { listProduct, buy, writes, clock, gate } = await start();
      const productId = await listProduct({
        saleStartsAt: '2030-06-01T12:00:00.000Z',
        saleEndsAt: '2030-06-01T13:00:00.000Z',
      });
      const before = writes();

      clock.set('2030-06-01T11:59:59.999Z');
      expect(await buy('alice', productId)).toMatchObject({ ok: false, code: 'SALE_NOT_ACTIVE' });
      clock.set('2030-06-01T13:00:00.000Z');
      expect(await buy('bob', productId)).toMatchObject({ ok: false, code: 'SALE_NOT_ACTIVE' });
      expect(writes()).toEqual(before);
      expect(gate.reserveCalls).toBe(0);

      clock.set('2030-06-01T12:00:00.000Z');
      expect(await buy('carol', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
    });

    it('LIMIT_EXCEEDED for more than maxPerOrder in one order, before the gate is asked', async () => {
      const { listProduct, buy, writes, gate } = await start();
      const productId = await listProduct({ perUserLimit: 4, maxPerOrder: 2 });
      const before = writes();

      expect(await buy('alice', productId, 3)).toMatchObject({ ok: false, code: 'LIMIT_EXCEEDED' });
      expect(writes()).toEqual(before);
      expect(gate.reserveCalls).toBe(0);
      expect(await gate.stockLeft(productId)).toBe(10);
    });

    it('LIMIT_EXCEEDED from the gate once the buyer holds perUserLimit units', async () => {
      const { listProduct, mustBuy, buy, writes, gate, drained } = await start();
      const productId = await listProduct({ perUserLimit: 2, maxPerOrder: 1 });
      await mustBuy('alice', productId);
      await mustBuy('alice', productId);
      await drained();
      const before = writes();

      const third = await buy('alice', productId);

      expect(third).toMatchObject({ ok: false, code: 'LIMIT_EXCEEDED' });
      expect(gate.reserveCalls).toBe(3);
      expect(writes()).toEqual(before);
      expect(await gate.stockLeft(productId)).toBe(8);
      expect((await buy('bob', productId)).ok).toBe(true);
    });

    it('SOLD_OUT from the gate, then from the sold-out flag without asking the gate again', async () => {
      const { listProduct, mustBuy, buy, writes, gate, soldOut } = await start();
      const productId = await listProduct({ stock: 1 });
      await mustBuy('alice', productId);
      const before = writes();

      expect(await buy('bob', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
      expect(gate.reserveCalls).toBe(2);
      expect(soldOut.isSoldOut(productId)).toBe(true);

      expect(await buy('carol', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
      expect(await buy('dave', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
      expect(gate.reserveCalls).toBe(2);
      expect(writes()).toEqual(before);
    });

    it('DUPLICATE_REQUEST while the same buyer already has an order for the product in progress', async () => {
      const { listProduct, buy, writes, gate } = await start({ groupCommit: { maxWaitMs: 50 } });
      const productId = await listProduct();
      // its batch waits 50 ms: meanwhile the buyer's lock is held
      const inProgress = buy('alice', productId);
      const before = writes();

      expect(await buy('alice', productId)).toMatchObject({ ok: false, code: 'DUPLICATE_REQUEST' });
      expect(writes()).toEqual(before);
      expect(gate.reserveCalls).toBe(2);
      expect((await buy('bob', productId)).ok).toBe(true);

      expect(await inProgress).toMatchObject({ ok: true, status: 'RESERVED' });
      expect((await buy('alice', productId)).ok).toBe(true);
    });

    it('the lock is released after every answer, so the next request of the buyer goes through', async () => {
      const { listProduct, buy } = await start();
      const productId = await listProduct({ perUserLimit: 2, maxPerOrder: 2 });

      const answers = [
        await buy('alice', productId),
        await buy('alice', productId, 2),
        await buy('alice', productId),
      ];

      expect(answers.map((a) => (a.ok ? a.status : a.code))).toEqual([
        'RESERVED',
        'LIMIT_EXCEEDED',
        'RESERVED',
      ]);
    });
  });

  describe('when a dependency fails', () => {
    it('a product missing from the gate answers InfrastructureUnavailable and writes nothing', async () => {
      const { listProduct, buy, writes, memoryGate } = await start();
      const productId = await listProduct();
      memoryGate.forget(productId);
      const before = writes();

      await expect(buy('alice', productId)).rejects.toBeInstanceOf(InfrastructureUnavailable);
      expect(writes()).toEqual(before);
    });

    it('a failed transaction answers InfrastructureUnavailable, writes nothing and gives the gate back', async () => {
      const { listProduct, buy, writes, gate, unitOfWork, dispatcher, db } = await start();
      const productId = await listProduct({ stock: 5, perUserLimit: 1, maxPerOrder: 1 });
      const before = writes();
      unitOfWork.failNext();

      const failure = buy('alice', productId);

      await expect(failure).rejects.toBeInstanceOf(InfrastructureUnavailable);
      await expect(failure).rejects.toMatchObject({ dependency: 'database' });
      expect(writes()).toEqual(before);
      expect(db.outbox.has(reservedMessageId('order-0001'))).toBe(false);
      expect(dispatcher.busy).toBe(false);
      expect(await gate.stockLeft(productId)).toBe(5);
      expect((await gate.held(productId)).size).toBe(0);
      // the buyer's quota of one came back with the stock: the retry is accepted
      expect(await buy('alice', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
    });

    it('when the gate restore fails as well, still InfrastructureUnavailable, and the failure is counted', async () => {
      const { listProduct, buy, writes, gate, unitOfWork, metrics } = await start();
      const productId = await listProduct({ stock: 5 });
      const before = writes();
      unitOfWork.failNext();
      gate.failRestores = true;

      await expect(buy('alice', productId)).rejects.toBeInstanceOf(InfrastructureUnavailable);

      expect(metrics.total('gate_restore_failures')).toBe(1);
      expect(writes()).toEqual(before);
      // under-counted, never over-counted: reconciliation gives the unit back later
      expect(await gate.stockLeft(productId)).toBe(4);
    });

    it.each([
      ['landed', true],
      ['never landed', false],
    ] as const)(
      'a commit left unanswered (%s) answers InfrastructureUnavailable and keeps the gate and the key: the repeat gets the one order',
      async (_how, landed) => {
        const { listProduct, gate, unitOfWork, placeOrder, metrics, order, db } = await start();
        const productId = await listProduct({ stock: 5, perUserLimit: 2 });
        const click = () =>
          placeOrder.execute({
            userId: 'alice',
            productId,
            quantity: 1,
            correlationId: 'c',
            idempotencyKey: 'k-1',
          });
        unitOfWork.commitUnanswered(landed);

        await expect(click()).rejects.toBeInstanceOf(InfrastructureUnavailable);
        expect(metrics.total('reservations_outcome_unknown')).toBe(1);
        // the unit and the key stay: it may have landed, and giving them back would let the repeat make a second
        expect(await gate.stockLeft(productId)).toBe(4);
        const [orderId] = [...(await gate.held(productId)).keys()];

        const repeat = await click();
        expect(repeat).toEqual({ ok: true, orderId, status: 'RESERVED', replayed: true });
        expect(await order(orderId!)).toMatchObject({ status: 'RESERVED', userId: 'alice' });
        expect(metrics.total('idempotent_recoveries')).toBe(landed ? 0 : 1);
        // one order, one unit, one reservation message, whichever way the first commit went
        expect(await gate.stockLeft(productId)).toBe(4);
        expect([...db.outbox.values()].filter((m) => m.orderId === orderId)).toHaveLength(1);
      },
    );

    it('a broker that refuses the publish leaves the row PENDING; the relay sends it later', async () => {
      const {
        listProduct,
        mustBuy,
        drained,
        publisher,
        reservedRow,
        relay,
        clock,
        order,
        mysqlStock,
        metrics,
      } = await start({ relay: { pendingGraceMs: 10_000 } });
      const productId = await listProduct({ stock: 5 });
      publisher.failing = true;

      const orderId = await mustBuy('alice', productId);
      await drained();

      expect((await reservedRow(orderId)).status).toBe(OutboxStatus.PENDING);
      expect(metrics.total('outbox_publish_failures')).toBe(1);
      expect(await order(orderId)).toMatchObject({ status: 'RESERVED' });

      publisher.failing = false;
      clock.advance(10_001);
      expect(await relay.run()).toEqual({ published: 1, failed: 0, dead: 0 });
      expect((await reservedRow(orderId)).status).toBe(OutboxStatus.SENT);

      await drained();
      expect(await order(orderId)).toMatchObject({ status: 'COMMITTED' });
      expect(await mysqlStock(productId)).toBe(4);
      expect((await reservedRow(orderId)).status).toBe(OutboxStatus.CONSUMED);
    });
  });

  describe('the sold-out flag', () => {
    it('is not raised when only the requested quantity does not fit: the last unit can still be bought', async () => {
      const { listProduct, mustBuy, buy } = await start();
      const productId = await listProduct({ stock: 3, perUserLimit: 2, maxPerOrder: 2 });
      await mustBuy('alice', productId, 2);

      expect(await buy('bob', productId, 2)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

      expect(await buy('carol', productId, 1)).toMatchObject({ ok: true, status: 'RESERVED' });
    });
  });

  describe('the product catalog', () => {
    it('a product listed right after somebody asked for its id can be bought at once', async () => {
      const { listProduct, buy } = await start();
      expect(await buy('early-bird', 1)).toMatchObject({ ok: false, code: 'PRODUCT_NOT_FOUND' });

      const productId = await listProduct();

      expect(productId).toBe(1);
      expect(await buy('alice', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
    });
  });
});
