import { describe, expect, it } from '@jest/globals';
import {
  type EventStore,
  type Inventory,
  type OrderReadModel,
  type Outbox,
  OutboxStatus,
  type TransactionalStores,
  type UnitOfWork,
  VersionConflict,
} from '../../src/application/index.js';
import { countWhere, freshPerTest, instant, uniqueName, type Teardown } from '../support/contract-helpers.js';
import {
  newProduct,
  orderReserved,
  orderView,
  outboxMessage,
  stockCommitted,
  plain,
  wrap,
} from '../support/contract-fixtures.js';
import { readAllAfter, tailPosition } from './event-store.contract.js';

/** A unit of work plus plain (non-transactional) stores on the same database, to look at what committed. */
export type UnitOfWorkFixture = Readonly<{
  unitOfWork: UnitOfWork;
  events: EventStore;
  orders: OrderReadModel;
  outbox: Outbox;
  inventory: Inventory;
}>;

class Boom extends Error {}

/** A promise and the function that settles it, to hold a transaction open while the test looks in. */
const latch = (): { opened: Promise<void>; open: () => void } => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};

type Write = Readonly<{ name: string; run: (stores: TransactionalStores) => Promise<unknown> }>;

export const unitOfWorkContract = (
  name: string,
  make: () => Promise<UnitOfWorkFixture>,
  teardown?: Teardown<UnitOfWorkFixture>,
) =>
  describe(`UnitOfWork contract: ${name}`, () => {
    const db = freshPerTest(make, teardown);

    /** A product that exists before each transaction, and the names the writes below use. */
    const scene = async () => {
      const existing = await db().inventory.create(newProduct({ stock: 10 }));
      await db().outbox.add(outboxMessage(uniqueName('existing')), instant(0));
      const [existingMessage] = await db().outbox.due({
        retryBefore: instant(1),
        staleSentBefore: instant(1),
        limit: 1,
      });
      if (!existingMessage) throw new Error('the scene needs its outbox row');
      const stream = uniqueName('order');
      const orderId = uniqueName('order-id');
      const messageId = uniqueName('message');
      const writes: Write[] = [
        { name: 'event append', run: (s) => s.events.append(stream, wrap([orderReserved(orderId)]), 0) },
        { name: 'order view upsert', run: (s) => s.orders.upsert(orderView(orderId)) },
        { name: 'outbox insert', run: (s) => s.outbox.add(outboxMessage(messageId), instant(1)) },
        { name: 'product create', run: (s) => s.inventory.create(newProduct({ name: 'created in tx' })) },
        { name: 'stock decrement', run: (s) => s.inventory.tryDecrement(existing.productId, 3) },
        { name: 'stock merged decrement', run: (s) => s.inventory.decrementMany(existing.productId, [1, 1]) },
        { name: 'stock increment', run: (s) => s.inventory.increment(existing.productId, 5) },
        {
          name: 'outbox status change',
          run: (s) => s.outbox.markConsumed(existingMessage.messageId, instant(2)),
        },
      ];
      const snapshot = async () => ({
        stream: plain(await db().events.read(stream)),
        tail: await tailPosition(db().events),
        order: await db().orders.get(orderId),
        message: await db().outbox.get(messageId),
        existingMessage: await db().outbox.get(existingMessage.messageId),
        products: await db().inventory.list(),
      });
      return { existing, stream, orderId, messageId, writes, snapshot };
    };

    it('makes every write visible after commit', async () => {
      const { existing, stream, orderId, messageId, writes } = await scene();
      await db().unitOfWork.run(async (stores) => {
        for (const write of writes) await write.run(stores);
      });
      expect(plain(await db().events.read(stream))).toEqual({ events: [orderReserved(orderId)], version: 1 });
      expect(await db().orders.get(orderId)).toEqual(orderView(orderId));
      expect((await db().outbox.get(messageId))?.status).toBe(OutboxStatus.PENDING);
      const products = await db().inventory.list();
      expect(products.map((p) => p.name).sort()).toEqual(['created in tx', 'flash widget']);
      expect((await db().inventory.get(existing.productId))?.stock).toBe(10 - 3 - 2 + 5);
    });

    it('passes the returned value through', async () => {
      const value = { answer: 42 };
      await expect(db().unitOfWork.run(() => Promise.resolve(value))).resolves.toBe(value);
    });

    it('lets the work read its own writes', async () => {
      const { existing, stream, orderId } = await scene();
      const seen = await db().unitOfWork.run(async (stores) => {
        await stores.events.append(stream, wrap([orderReserved(orderId)]), 0);
        await stores.orders.upsert(orderView(orderId));
        await stores.inventory.tryDecrement(existing.productId, 4);
        return {
          version: (await stores.events.read(stream)).version,
          order: await stores.orders.get(orderId),
          stock: (await stores.inventory.get(existing.productId))?.stock,
        };
      });
      expect(seen).toEqual({ version: 1, order: orderView(orderId), stock: 6 });
    });

    it("answers every read inside the work from the work's own writes", async () => {
      const { existing, stream, orderId, messageId } = await scene();
      const other = uniqueName('order-id');
      const seen = await db().unitOfWork.run(async (stores) => {
        await stores.events.append(stream, wrap([orderReserved(orderId)]), 0);
        // a stream's version is read to check an append at version 1: it must see the append just made
        await stores.events.appendMany([
          { streamId: stream, events: wrap([stockCommitted(orderId)]), expectedVersion: 1 },
        ]);
        await stores.orders.upsert(
          orderView(orderId, { status: 'COMMITTED', userId: 'holder', quantity: 2 }),
        );
        await stores.orders.upsert(orderView(other, { status: 'PAID', userId: 'holder', quantity: 1 }));
        await stores.outbox.add(outboxMessage(messageId), instant(1));
        const created = await stores.inventory.create(newProduct({ name: 'made inside' }));
        return {
          version: (await stores.events.readMany([stream])).get(stream)?.version,
          held: await stores.orders.unitsHeldByUsers(['holder'], 7, ['COMMITTED', 'PAID']),
          heldOne: await stores.orders.unitsHeld('holder', 7, ['COMMITTED', 'PAID']),
          tally: (await stores.orders.tally(7)).find((t) => t.status === 'COMMITTED')?.units,
          byProduct: (await stores.orders.findByProduct(7, ['PAID'])).map((o) => o.orderId),
          pending: (await stores.outbox.countByStatus())[OutboxStatus.PENDING],
          message: (await stores.outbox.get(messageId))?.status,
          product: (await stores.inventory.get(created.productId))?.name,
          listed: (await stores.inventory.list()).map((p) => p.productId),
          stock: (await stores.inventory.get(existing.productId))?.stock,
        };
      });
      expect(seen).toEqual({
        version: 2,
        held: new Map([['holder', 3]]),
        heldOne: 3,
        tally: 2,
        byProduct: [other],
        pending: 2,
        message: OutboxStatus.PENDING,
        product: 'made inside',
        listed: expect.arrayContaining([existing.productId]) as unknown,
        stock: 10,
      });
    });

    describe('an error thrown after a write leaves nothing written', () => {
      const writeNames = [
        'event append',
        'order view upsert',
        'outbox insert',
        'product create',
        'stock decrement',
        'stock merged decrement',
        'stock increment',
        'outbox status change',
      ];
      it.each(writeNames.map((last, i): [number, string] => [i + 1, last]))(
        'throwing after write %i (%s)',
        async (writesBeforeError) => {
          const { writes, snapshot } = await scene();
          expect(writes.map((w) => w.name)).toEqual(writeNames);
          const before = await snapshot();
          const error = new Boom(`after ${writesBeforeError} writes`);
          const attempt = db().unitOfWork.run(async (stores) => {
            for (const write of writes.slice(0, writesBeforeError)) await write.run(stores);
            throw error;
          });
          await expect(attempt).rejects.toBe(error);
          expect(await snapshot()).toEqual(before);
        },
      );
    });

    it('rolls back earlier writes when a later append meets a VersionConflict', async () => {
      const { stream, orderId, messageId, snapshot } = await scene();
      await db().events.append(stream, wrap([orderReserved(orderId)]), 0);
      const before = await snapshot();
      const attempt = db().unitOfWork.run(async (stores) => {
        await stores.orders.upsert(orderView(orderId, { status: 'COMMITTED' }));
        await stores.outbox.add(outboxMessage(messageId), instant(1));
        await stores.events.append(stream, wrap([orderReserved(orderId)]), 0);
      });
      await expect(attempt).rejects.toBeInstanceOf(VersionConflict);
      expect(await snapshot()).toEqual(before);
    });

    it('lets exactly 10 of 20 concurrent transactions take 1 unit of stock 10', async () => {
      const product = await db().inventory.create(newProduct({ stock: 10 }));
      const taken = await Promise.all(
        Array.from({ length: 20 }, () =>
          db().unitOfWork.run((stores) => stores.inventory.tryDecrement(product.productId, 1)),
        ),
      );
      expect(countWhere(taken, (t) => t)).toBe(10);
      expect((await db().inventory.get(product.productId))?.stock).toBe(0);
    });

    describe('isolation from readers and writers outside the transaction', () => {
      it('hides uncommitted writes from readers outside it', async () => {
        const { existing, stream, orderId, messageId } = await scene();
        const tail = await tailPosition(db().events);
        const written = latch();
        const finish = latch();
        const transaction = db().unitOfWork.run(async (stores) => {
          await stores.events.append(stream, wrap([orderReserved(orderId)]), 0);
          await stores.orders.upsert(orderView(orderId));
          await stores.outbox.add(outboxMessage(messageId), instant(1));
          await stores.inventory.tryDecrement(existing.productId, 4);
          written.open();
          await finish.opened;
        });
        await written.opened;
        const seenOutside = {
          stream: plain(await db().events.read(stream)),
          all: await readAllAfter(db().events, tail),
          order: await db().orders.get(orderId),
          message: await db().outbox.get(messageId),
          stock: (await db().inventory.get(existing.productId))?.stock,
        };
        finish.open();
        await transaction;
        expect(seenOutside).toEqual({
          stream: { events: [], version: 0 },
          all: [],
          order: null,
          message: null,
          stock: 10,
        });
      });

      it('keeps a stock change made outside while a transaction that rolls back was open', async () => {
        const product = await db().inventory.create(newProduct({ stock: 10 }));
        const written = latch();
        const finish = latch();
        const error = new Boom('rolled back');
        const transaction = db().unitOfWork.run(async (stores) => {
          await stores.inventory.tryDecrement(product.productId, 3);
          written.open();
          await finish.opened;
          throw error;
        });
        await written.opened;
        // not awaited yet: a real database makes this wait for the transaction's row lock
        const outside = db().inventory.tryDecrement(product.productId, 2);
        finish.open();
        await expect(transaction).rejects.toBe(error);
        expect(await outside).toBe(true);
        expect((await db().inventory.get(product.productId))?.stock).toBe(8);
      });

      it('never reuses the id of a product created outside while a transaction that rolls back was open', async () => {
        const written = latch();
        const finish = latch();
        const error = new Boom('rolled back');
        const transaction = db().unitOfWork.run(async (stores) => {
          await stores.inventory.create(newProduct({ name: 'rolled back' }));
          written.open();
          await finish.opened;
          throw error;
        });
        await written.opened;
        const outside = db().inventory.create(newProduct({ name: 'outside' }));
        finish.open();
        await expect(transaction).rejects.toBe(error);
        const kept = await outside;
        const later = [
          await db().inventory.create(newProduct({ name: 'later-1' })),
          await db().inventory.create(newProduct({ name: 'later-2' })),
        ];
        expect(new Set([kept, ...later].map((p) => p.productId)).size).toBe(3);
        expect(await db().inventory.get(kept.productId)).toEqual(kept);
        expect((await db().inventory.list()).map((p) => p.name).sort()).toEqual([
          'later-1',
          'later-2',
          'outside',
        ]);
      });

      it('keeps events appended outside while a transaction that rolls back was open', async () => {
        const tail = await tailPosition(db().events);
        const inside = uniqueName('order');
        const outsideStream = uniqueName('order');
        const written = latch();
        const finish = latch();
        const error = new Boom('rolled back');
        const transaction = db().unitOfWork.run(async (stores) => {
          await stores.events.append(inside, wrap([orderReserved('inside')]), 0);
          written.open();
          await finish.opened;
          throw error;
        });
        await written.opened;
        const outside = db().events.append(outsideStream, wrap([orderReserved('outside')]), 0);
        finish.open();
        await expect(transaction).rejects.toBe(error);
        expect(await outside).toBe(1);
        expect(plain(await db().events.read(inside))).toEqual({ events: [], version: 0 });
        expect(plain(await db().events.read(outsideStream))).toEqual({
          events: [orderReserved('outside')],
          version: 1,
        });
        expect((await readAllAfter(db().events, tail)).map((s) => [s.streamId, s.event])).toEqual([
          [outsideStream, orderReserved('outside')],
        ]);
      });
    });
  });

/** Every method of a port, called once: `Record<keyof Port, …>` makes a method added to the port a type error here. */
type EveryCall<Port> = Record<keyof Port, (stores: TransactionalStores) => Promise<unknown>>;

const inventoryCalls = (productId: () => number): EveryCall<Inventory> => ({
  create: (s) => s.inventory.create(newProduct({ name: 'inside' })),
  get: (s) => s.inventory.get(productId()),
  list: (s) => s.inventory.list(),
  tryDecrement: (s) => s.inventory.tryDecrement(productId(), 1),
  decrementMany: (s) => s.inventory.decrementMany(productId(), [1, 1]),
  increment: (s) => s.inventory.increment(productId(), 1),
});

const eventCalls = (stream: string): EveryCall<EventStore> => ({
  read: (s) => s.events.read(stream),
  append: (s) => s.events.append(stream, wrap([orderReserved('inside')]), 0),
  readMany: (s) => s.events.readMany([stream, `${stream}-other`]),
  appendMany: (s) =>
    s.events.appendMany([{ streamId: stream, events: wrap([stockCommitted('inside')]), expectedVersion: 1 }]),
  readAll: (s) => s.events.readAll(0, 10),
});

const orderCalls = (orderId: string): EveryCall<OrderReadModel> => ({
  upsert: (s) => s.orders.upsert(orderView(orderId)),
  upsertMany: (s) => s.orders.upsertMany([orderView(orderId, { status: 'COMMITTED' })]),
  get: (s) => s.orders.get(orderId),
  getMany: (s) => s.orders.getMany([orderId, `${orderId}-other`]),
  unitsHeld: (s) => s.orders.unitsHeld('user-1', 7, ['COMMITTED']),
  unitsHeldByUsers: (s) => s.orders.unitsHeldByUsers(['user-1'], 7, ['COMMITTED']),
  findByStatus: (s) => s.orders.findByStatus('COMMITTED', instant(10), 10),
  tally: (s) => s.orders.tally(7),
  findByProduct: (s) => s.orders.findByProduct(7, ['COMMITTED']),
  listByBuyer: (s) => s.orders.listByBuyer('user-1', { productId: 7, limit: 10 }),
});

const outboxCalls = (messageId: string): EveryCall<Outbox> => ({
  add: (s) => s.outbox.add(outboxMessage(messageId), instant(0)),
  addMany: (s) => s.outbox.addMany([outboxMessage(`${messageId}-2`)], instant(0)),
  get: (s) => s.outbox.get(messageId),
  markSent: (s) => s.outbox.markSent(messageId, instant(1)),
  markSentMany: (s) => s.outbox.markSentMany([messageId, `${messageId}-2`], instant(1)),
  markConsumed: (s) => s.outbox.markConsumed(messageId, instant(2)),
  markConsumedMany: (s) => s.outbox.markConsumedMany([`${messageId}-2`], instant(2)),
  markFailed: (s) => s.outbox.markFailed(`${messageId}-2`, 'boom', instant(3), 5),
  due: (s) => s.outbox.due({ retryBefore: instant(10), staleSentBefore: instant(10), limit: 10 }),
  countByStatus: (s) => s.outbox.countByStatus(),
  countOpen: (s) => s.outbox.countOpen(),
});

/**
 * Every store method runs inside one unit of work on the transaction's own connection. Run it on a unit of
 * work with a single connection: a method that reached outside its transaction for a second connection
 * would wait for the one the transaction holds, and fail.
 */
export const everyStatementInsideContract = (
  name: string,
  make: () => Promise<UnitOfWorkFixture>,
  teardown?: Teardown<UnitOfWorkFixture>,
) =>
  describe(`UnitOfWork contract, every store method inside one transaction: ${name}`, () => {
    const db = freshPerTest(make, teardown);

    it('runs every method of every store inside the transaction and commits', async () => {
      let productId = 0;
      const calls = {
        inventory: inventoryCalls(() => productId),
        events: eventCalls(uniqueName('order')),
        orders: orderCalls(uniqueName('order-id')),
        outbox: outboxCalls(uniqueName('message')),
      };
      const ran: string[] = [];
      await db().unitOfWork.run(async (stores) => {
        productId = (await stores.inventory.create(newProduct({ stock: 10 }))).productId;
        for (const [store, methods] of Object.entries(calls))
          for (const [method, call] of Object.entries(methods)) {
            await call(stores);
            ran.push(`${store}.${method}`);
          }
      });
      expect(ran).toHaveLength(
        Object.values(calls).reduce((n, methods) => n + Object.keys(methods).length, 0),
      );
      expect((await db().inventory.get(productId))?.stock).toBe(8);
      expect((await db().outbox.countByStatus())[OutboxStatus.CONSUMED]).toBe(2);
    });
  });
