import { describe, expect, it } from '@jest/globals';
import {
  type EventStore,
  orderCommands,
  retryOnConflict,
  VersionConflict,
} from '../../../src/application/index.js';
import { MemoryDatabase } from '../../../src/adapters/memory/memory-database.js';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { IllegalOrderTransition, orderStreamId } from '../../../src/domain/index.js';
import { SequentialIds } from '../../support/app-doubles.js';

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

/** A store whose next read of a stream lets another writer append to it first. */
const racing = (store: EventStore, times: number): EventStore => {
  let races = times;
  return Object.assign(Object.create(store) as EventStore, {
    readMany: async (ids: readonly string[]) => {
      const read = await store.readMany(ids);
      // the other writer commits the order between this read and the append
      if (races-- > 0) await orderCommands(new SequentialIds('other')).handle(store, commit('o1'));
      return read;
    },
  });
};

describe('the command handler', () => {
  it('decides on a new stream without reading it and appends each event in an envelope', async () => {
    const store = new MemoryEventStore(new MemoryDatabase());
    const decision = await orderCommands(new SequentialIds('event')).handle(store, reserve('o1'));

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

  it('folds the stream read, decides on it, and appends at the version read', async () => {
    const store = new MemoryEventStore(new MemoryDatabase());
    const handler = orderCommands(new SequentialIds('event'));
    await handler.handle(store, reserve('o1'));

    const decision = await handler.handle(store, commit('o1'));

    expect([decision.before.status, decision.state.status, decision.version]).toEqual([
      'RESERVED',
      'COMMITTED',
      1,
    ]);
    expect((await store.read(orderStreamId('o1'))).version).toBe(2);
    // a command that already took effect appends nothing
    expect((await handler.handle(store, commit('o1'))).envelopes).toEqual([]);
  });

  it('appends nothing when the decider refuses', async () => {
    const store = new MemoryEventStore(new MemoryDatabase());
    const handler = orderCommands(new SequentialIds('event'));
    await handler.handle(store, reserve('o1'));
    const pay = { command: { type: 'PayOrder' as const, orderId: 'o1', now: NOW }, context };

    await expect(handler.handle(store, pay)).rejects.toBeInstanceOf(IllegalOrderTransition);
    expect((await store.read(orderStreamId('o1'))).version).toBe(1);
  });

  it('runs again on a VersionConflict, deciding on what the other writer appended', async () => {
    const store = new MemoryEventStore(new MemoryDatabase());
    const handler = orderCommands(new SequentialIds('event'));
    await handler.handle(store, reserve('o1'));
    const contested = racing(store, 1);
    let runs = 0;

    const decision = await retryOnConflict(() => {
      runs += 1;
      return handler.handle(contested, commit('o1'));
    });

    // the other writer committed the order first: the second run finds it done and appends nothing
    expect(runs).toBe(2);
    expect(decision.envelopes).toEqual([]);
    expect((await store.read(orderStreamId('o1'))).events.map((e) => e.correlationId)).toEqual([
      'corr-1',
      'corr-1',
    ]);
  });

  it('gives up after three runs and throws the conflict', async () => {
    const db = new MemoryDatabase();
    const store = new MemoryEventStore(db);
    const handler = orderCommands(new SequentialIds('event'));
    await handler.handle(store, reserve('o1'));
    let runs = 0;
    const alwaysBehind: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendMany: () => Promise.reject(new VersionConflict(orderStreamId('o1'), 1)),
    });

    await expect(
      retryOnConflict(() => {
        runs += 1;
        return handler.handle(alwaysBehind, commit('o1'));
      }),
    ).rejects.toBeInstanceOf(VersionConflict);
    expect(runs).toBe(3);
  });
});
