import { describe, expect, it } from '@jest/globals';
import {
  commandHandlers,
  CONFLICT_RETRY,
  type EventStore,
  type NewOutboxMessage,
  type Outbox,
  OutboxStatus,
  retryDelayMs,
  type TransactionalStores,
  type UnitOfWork,
  VersionConflict,
} from '../../../src/application/index.js';
import { MemoryDatabase } from '../../../src/adapters/memory/memory-database.js';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryInventory } from '../../../src/adapters/memory/memory-inventory.js';
import { MemoryOrderReadModel } from '../../../src/adapters/memory/memory-order-read-model.js';
import { MemoryOutbox } from '../../../src/adapters/memory/memory-outbox.js';
import { MemoryUnitOfWork } from '../../../src/adapters/memory/memory-unit-of-work.js';
import { IllegalOrderTransition, orderStreamId } from '../../../src/domain/index.js';
import { SequentialIds, TestClock } from '../../support/app-doubles.js';

const NOW = '2030-01-01T00:00:00.000Z';
const context = { occurredAt: NOW, correlationId: 'corr-1', causationId: 'req-1', userId: 'ada' };
const reserve = (orderId: string) => ({
  command: { type: 'ReserveOrder' as const, orderId, productId: 7, userId: 'ada', quantity: 1, now: NOW },
  context,
  isNew: true,
});
const commit = (orderId: string) => ({
  command: { type: 'CommitStock' as const, orderId, now: NOW },
  context: { occurredAt: NOW, correlationId: 'corr-1', causationId: `reserved-${orderId}` },
});
const release = (orderId: string) => ({
  command: { type: 'ReleaseReservation' as const, orderId, reason: 'SOLD_OUT' as const, now: NOW },
  context: { occurredAt: NOW, correlationId: 'corr-1', causationId: `reserved-${orderId}` },
});

/**
 * The handlers on the memory stores, with an event store the test may wrap (to race it, or to make it fail).
 * `direct`: each write commits on its own, so that another writer may come in between (no transaction).
 */
const setUp = (
  wrap: (events: EventStore) => EventStore = (events) => events,
  direct = false,
  wrapOutbox: (outbox: Outbox) => Outbox = (outbox) => outbox,
) => {
  const db = new MemoryDatabase();
  const inner: UnitOfWork = direct
    ? {
        run: (work) =>
          work({
            events: new MemoryEventStore(db),
            orders: new MemoryOrderReadModel(db),
            outbox: new MemoryOutbox(db),
            inventory: new MemoryInventory(db),
          }),
      }
    : new MemoryUnitOfWork(db);
  const unitOfWork: UnitOfWork = {
    run: (work) =>
      inner.run((stores: TransactionalStores) =>
        work({ ...stores, events: wrap(stores.events), outbox: wrapOutbox(stores.outbox) }),
      ),
  };
  const dispatched: NewOutboxMessage[][] = [];
  const { orders } = commandHandlers({
    unitOfWork,
    ids: new SequentialIds('event'),
    clock: new TestClock(NOW),
    dispatcher: { dispatchSoon: (messages) => dispatched.push([...messages]) },
  });
  return { db, orders, store: new MemoryEventStore(db), dispatched };
};

describe('the command handler', () => {
  it('decides on a new stream without reading it and appends each event in an envelope', async () => {
    const { orders, store } = setUp();
    const decision = await orders.write((tx) => tx.decideOne(reserve('o1')));

    expect(decision.state.status).toBe('RESERVED');
    const { events, version } = await store.read(orderStreamId('o1'));
    expect(version).toBe(1);
    expect(events[0]).toMatchObject({
      eventId: 'event-0001',
      schemaVersion: 1,
      occurredAt: NOW,
      correlationId: 'corr-1',
      causationId: 'req-1',
      userId: 'ada',
      event: { type: 'OrderReserved', data: { orderId: 'o1', quantity: 1 } },
    });
  });

  it('keeps the orders projection in step and adds the outbox rows in the same transaction', async () => {
    const { db, orders, dispatched } = setUp();
    await orders.write((tx) => tx.decideOne(reserve('o1')));

    expect(await new MemoryOrderReadModel(db).get('o1')).toMatchObject({ status: 'RESERVED', userId: 'ada' });
    expect(await new MemoryOutbox(db).get('reserved-o1')).toMatchObject({
      status: OutboxStatus.PENDING,
      orderId: 'o1',
    });
    // handed to the broker once committed
    expect(dispatched.map((batch) => batch.map((m) => m.messageId))).toEqual([['reserved-o1']]);

    await orders.write((tx) => tx.decideOne(commit('o1')));
    expect((await new MemoryOrderReadModel(db).get('o1'))?.status).toBe('COMMITTED');
  });

  it('folds the stream read, decides on it, and appends at the version read', async () => {
    const { orders, store } = setUp();
    await orders.write((tx) => tx.decideOne(reserve('o1')));

    const decision = await orders.write((tx) => tx.decideOne(commit('o1')));

    expect([decision.before.status, decision.state.status, decision.version]).toEqual([
      'RESERVED',
      'COMMITTED',
      1,
    ]);
    expect((await store.read(orderStreamId('o1'))).version).toBe(2);
    // a command that already took effect appends nothing
    expect((await orders.write((tx) => tx.decideOne(commit('o1')))).envelopes).toEqual([]);
  });

  it('appends, projects and sends nothing when the decider refuses', async () => {
    const { db, orders, store, dispatched } = setUp();
    await orders.write((tx) => tx.decideOne(reserve('o1')));
    const pay = { command: { type: 'PayOrder' as const, orderId: 'o1', now: NOW }, context };

    await expect(orders.write((tx) => tx.decideOne(pay))).rejects.toBeInstanceOf(IllegalOrderTransition);
    expect((await store.read(orderStreamId('o1'))).version).toBe(1);
    expect((await new MemoryOrderReadModel(db).get('o1'))?.status).toBe('RESERVED');
    expect(dispatched).toHaveLength(1);
  });

  it("sends a plan's own writes with the handler's, and none of them when the plan fails", async () => {
    const { db, orders } = setUp();
    await orders.write((tx) => tx.decideOne(reserve('o1')));

    await expect(
      orders.write(async (tx) => {
        await tx.decideOne(release('o1'));
        tx.also(() => tx.stores.outbox.markConsumedMany(['reserved-o1'], NOW));
        throw new Error('the plan gave up');
      }),
    ).rejects.toThrow('the plan gave up');
    expect((await new MemoryOrderReadModel(db).get('o1'))?.status).toBe('RESERVED');

    await orders.write(async (tx) => {
      await tx.decideOne(release('o1'));
      tx.also(() => tx.stores.outbox.markConsumedMany(['reserved-o1'], NOW));
    });
    expect((await new MemoryOrderReadModel(db).get('o1'))?.status).toBe('RELEASED');
    expect((await new MemoryOutbox(db).get('reserved-o1'))?.status).toBe(OutboxStatus.CONSUMED);
  });

  it('runs again on a VersionConflict, deciding on what the other writer appended', async () => {
    let races = 1;
    let runs = 0;
    const { orders, store } = setUp(
      (events) =>
        Object.assign(Object.create(events) as EventStore, {
          readMany: async (ids: readonly string[]) => {
            runs += 1;
            const read = await events.readMany(ids);
            // the other writer commits the order between this read and the append
            if (races-- > 0)
              await store.appendMany([
                {
                  streamId: orderStreamId('o1'),
                  expectedVersion: 1,
                  events: [
                    {
                      eventId: 'other-1',
                      schemaVersion: 1,
                      ...commit('o1').context,
                      event: {
                        type: 'StockCommitted',
                        data: { orderId: 'o1', productId: 7, quantity: 1, committedAt: NOW },
                      },
                    },
                  ],
                },
              ]);
            return read;
          },
        }),
      true,
    );
    await orders.write((tx) => tx.decideOne(reserve('o1')));

    const decision = await orders.write((tx) => tx.decideOne(commit('o1')));

    // the other writer committed the order first: the second run finds it done and appends nothing
    expect(runs).toBe(2);
    expect(decision.envelopes).toEqual([]);
    expect((await store.read(orderStreamId('o1'))).events.map((e) => e.eventId)).toEqual([
      'event-0001',
      'other-1',
    ]);
  });

  it('runs again on a conflict told after another write of the transaction failed on it', async () => {
    // MySQL tells the conflict after a second statement (which stream was ahead), so the outbox row the other
    // writer also made fails first: the conflict, not the duplicate row, decides what happens
    let conflicts = 0;
    const { orders } = setUp(
      (events) =>
        Object.assign(Object.create(events) as EventStore, {
          appendMany: async (appends: Parameters<EventStore['appendMany']>[0]) => {
            if (conflicts === 0) return events.appendMany(appends);
            await new Promise((resolve) => setImmediate(resolve));
            conflicts -= 1;
            throw new VersionConflict(orderStreamId('o1'), 2);
          },
        }),
      false,
      (outbox) =>
        Object.assign(Object.create(outbox) as Outbox, {
          addMany: (messages: readonly NewOutboxMessage[], at: string) =>
            conflicts > 0
              ? Promise.reject(new Error(`duplicate outbox message id ${messages[0]?.messageId}`))
              : outbox.addMany(messages, at),
        }),
    );
    await orders.write((tx) => tx.decideOne(reserve('o1')));
    await orders.write((tx) => tx.decideOne(commit('o1')));
    conflicts = 1;

    const decision = await orders.write((tx) => tx.decideOne(release('o1')));

    expect(conflicts).toBe(0);
    expect(decision.envelopes.map((e) => e.event.type)).toEqual(['ReservationReleased']);
  });

  it('gives up after three runs and throws the conflict', async () => {
    let runs = 0;
    let failing = false;
    const { orders } = setUp((events) =>
      Object.assign(Object.create(events) as EventStore, {
        appendMany: (appends: Parameters<EventStore['appendMany']>[0]) => {
          if (!failing) return events.appendMany(appends);
          runs += 1;
          return Promise.reject(new VersionConflict(orderStreamId('o1'), 1));
        },
      }),
    );
    await orders.write((tx) => tx.decideOne(reserve('o1')));
    failing = true;

    await expect(orders.write((tx) => tx.decideOne(commit('o1')))).rejects.toBeInstanceOf(VersionConflict);
    expect(runs).toBe(CONFLICT_RETRY.attempts);
  });

  it('waits a jittered time before a retry, within an exponential ceiling', () => {
    const policy = { attempts: 5, baseDelayMs: 4, maxDelayMs: 20 };
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, () => 0.999))).toEqual([3, 7, 15, 19]);
    expect(retryDelayMs(policy, 3, () => 0)).toBe(0);
    expect(retryDelayMs(policy, 2, () => 0.5)).toBe(4);
  });
});
