import { describe, expect, it } from '@jest/globals';
import {
  type EventStore,
  EventUpcaster,
  type StoredEvent,
  UnknownEventSchema,
  VersionConflict,
} from '../../src/application/index.js';
import { type DomainEvent, EVENT_SCHEMA_VERSIONS } from '../../src/domain/index.js';
import { freshPerTest, instant, uniqueName, type Teardown } from '../support/contract-helpers.js';
import {
  everyKindOfEvent,
  orderReserved,
  plain,
  stockCommitted,
  wrap,
} from '../support/contract-fixtures.js';

const PAGE = 1_000;

/** Every stored event after a position, read page by page. */
export const readAllAfter = async (store: EventStore, afterPosition: number): Promise<StoredEvent[]> => {
  const all: StoredEvent[] = [];
  for (let after = afterPosition; ;) {
    const page = await store.readAll(after, PAGE);
    all.push(...page);
    const last = page.at(-1);
    if (page.length < PAGE || !last) return all;
    after = last.position;
  }
};

/** The position of the last event already in the store (0 when empty), so tests only look at their own. */
export const tailPosition = async (store: EventStore): Promise<number> =>
  (await readAllAfter(store, 0)).at(-1)?.position ?? 0;

/**
 * `readWith`: another store over the same data, reading through the given upcaster (the upcasting seam).
 */
export const eventStoreContract = (
  name: string,
  make: () => Promise<EventStore>,
  readWith: (store: EventStore, upcaster: EventUpcaster) => EventStore,
  teardown?: Teardown<EventStore>,
) =>
  describe(`EventStore contract: ${name}`, () => {
    const store = freshPerTest(make, teardown);

    it('reads an unknown stream as empty at version 0', async () => {
      await expect(store().read(uniqueName('order'))).resolves.toEqual({ events: [], version: 0 });
    });

    it('returns the new version from append and reads the events back in order', async () => {
      const stream = uniqueName('order');
      expect(await store().append(stream, wrap([orderReserved('o1')]), 0)).toBe(1);
      expect(await store().append(stream, wrap([stockCommitted('o1'), stockCommitted('o1')]), 1)).toBe(3);
      expect(plain(await store().read(stream))).toEqual({
        events: [orderReserved('o1'), stockCommitted('o1'), stockCommitted('o1')],
        version: 3,
      });
    });

    it('versions each stream on its own', async () => {
      const a = uniqueName('order');
      const b = uniqueName('order');
      await store().append(a, wrap([orderReserved('a'), stockCommitted('a')]), 0);
      expect(await store().append(b, wrap([orderReserved('b')]), 0)).toBe(1);
      expect((await store().read(a)).version).toBe(2);
      expect((await store().read(b)).version).toBe(1);
    });

    it('round-trips every kind of event deeply equal', async () => {
      const stream = uniqueName('mixed');
      const events = everyKindOfEvent('o1');
      await store().append(stream, wrap(events), 0);
      expect((await store().read(stream)).events.map((e) => e.event)).toEqual(events);
    });

    it('keeps what was appended, whatever the caller does with its objects afterwards', async () => {
      const stream = uniqueName('order');
      const event = structuredClone(orderReserved('o1'));
      await store().append(stream, wrap([event]), 0);
      (event.data as { quantity: number }).quantity = 99;
      expect((await store().read(stream)).events.map((e) => e.event)).toEqual([orderReserved('o1')]);
    });

    it('throws VersionConflict at a wrong expected version and writes nothing', async () => {
      const stream = uniqueName('order');
      await store().append(stream, wrap([orderReserved('o1'), stockCommitted('o1')]), 0);
      const tail = await tailPosition(store());
      for (const wrong of [0, 1, 3, 10]) {
        const attempt = store().append(stream, wrap([stockCommitted('o1')]), wrong);
        await expect(attempt).rejects.toBeInstanceOf(VersionConflict);
        await expect(attempt).rejects.toMatchObject({ streamId: stream, expectedVersion: wrong });
      }
      const fresh = uniqueName('order');
      await expect(store().append(fresh, wrap([orderReserved('o2')]), 1)).rejects.toBeInstanceOf(
        VersionConflict,
      );
      expect(plain(await store().read(stream))).toEqual({
        events: [orderReserved('o1'), stockCommitted('o1')],
        version: 2,
      });
      expect(plain(await store().read(fresh))).toEqual({ events: [], version: 0 });
      expect(await readAllAfter(store(), tail)).toEqual([]);
    });

    it('reads several streams at once, unknown ones empty', async () => {
      const a = uniqueName('order');
      const b = uniqueName('order');
      const unknown = uniqueName('order');
      await store().append(a, wrap([orderReserved('a'), stockCommitted('a')]), 0);
      await store().append(b, wrap([orderReserved('b')]), 0);
      const found = await store().readMany([a, b, unknown]);
      expect(plain(found.get(a))).toEqual({ events: [orderReserved('a'), stockCommitted('a')], version: 2 });
      expect(plain(found.get(b))).toEqual({ events: [orderReserved('b')], version: 1 });
      expect(plain(found.get(unknown))).toEqual({ events: [], version: 0 });
      expect((await store().readMany([])).size).toBe(0);
    });

    it('appends to several streams at once, in one global order', async () => {
      const tail = await tailPosition(store());
      const a = uniqueName('order');
      const b = uniqueName('order');
      await store().append(a, wrap([orderReserved('a')]), 0);
      await store().appendMany([
        { streamId: a, events: wrap([stockCommitted('a')], { causationId: 'm-a' }), expectedVersion: 1 },
        { streamId: b, events: wrap([orderReserved('b'), stockCommitted('b')]), expectedVersion: 0 },
      ]);
      expect(plain(await store().read(a))).toEqual({
        events: [orderReserved('a'), stockCommitted('a')],
        version: 2,
      });
      expect(plain(await store().read(b))).toEqual({
        events: [orderReserved('b'), stockCommitted('b')],
        version: 2,
      });
      const all = await readAllAfter(store(), tail);
      expect(all.map((e) => [e.streamId, e.streamVersion, e.causationId])).toEqual([
        [a, 1, null],
        [a, 2, 'm-a'],
        [b, 1, null],
        [b, 2, null],
      ]);
    });

    it('writes nothing of a multi-stream append when any stream is off its expected version', async () => {
      const a = uniqueName('order');
      const b = uniqueName('order');
      await store().append(a, wrap([orderReserved('a')]), 0);
      await store().append(b, wrap([orderReserved('b'), stockCommitted('b')]), 0);
      const tail = await tailPosition(store());
      for (const [behindOrAhead, wrong] of [
        ['behind', 3],
        ['ahead', 1],
      ] as const) {
        const fresh = uniqueName('order');
        const attempt = store().appendMany([
          { streamId: fresh, events: wrap([orderReserved('c')]), expectedVersion: 0 },
          { streamId: a, events: wrap([stockCommitted('a')]), expectedVersion: 1 },
          { streamId: b, events: wrap([stockCommitted('b')]), expectedVersion: wrong },
        ]);
        await expect(attempt).rejects.toBeInstanceOf(VersionConflict);
        await expect(attempt).rejects.toMatchObject({ streamId: b, expectedVersion: wrong });
        expect({ behindOrAhead, fresh: await store().read(fresh) }).toEqual({
          behindOrAhead,
          fresh: { events: [], version: 0 },
        });
      }
      expect((await store().read(a)).version).toBe(1);
      expect((await store().read(b)).version).toBe(2);
      expect(await readAllAfter(store(), tail)).toEqual([]);
    });

    it('lets exactly one of several concurrent appends at the same expected version win', async () => {
      const stream = uniqueName('order');
      await store().append(stream, wrap([orderReserved('o1')]), 0);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          store().append(stream, wrap([stockCommitted(`writer-${i}`)]), 1),
        ),
      );
      const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const outcome of outcomes)
        if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(VersionConflict);
      expect(plain(await store().read(stream))).toEqual({
        events: [orderReserved('o1'), stockCommitted(`writer-${winners[0] ?? -1}`)],
        version: 2,
      });
    });

    it('reads all streams in global order with increasing positions and stream versions', async () => {
      const tail = await tailPosition(store());
      const a = uniqueName('order');
      const b = uniqueName('order');
      await store().append(a, wrap([orderReserved('a')]), 0);
      await store().append(b, wrap([orderReserved('b'), stockCommitted('b')]), 0);
      await store().append(a, wrap([stockCommitted('a')]), 1);
      const all = await readAllAfter(store(), tail);
      expect(all.map((s) => [s.streamId, s.streamVersion, s.event])).toEqual([
        [a, 1, orderReserved('a')],
        [b, 1, orderReserved('b')],
        [b, 2, stockCommitted('b')],
        [a, 2, stockCommitted('a')],
      ]);
      for (let i = 1; i < all.length; i += 1)
        expect(all[i]?.position).toBeGreaterThan(all[i - 1]?.position ?? Infinity);
      expect(all[0]?.position).toBeGreaterThan(tail);
      for (const stored of all) expect(Number.isNaN(Date.parse(stored.occurredAt))).toBe(false);
    });

    it('pages through readAll by position without gaps or repeats', async () => {
      const tail = await tailPosition(store());
      for (let i = 0; i < 7; i += 1)
        await store().append(uniqueName('order'), wrap([orderReserved(`o${i}`)]), 0);
      const pages: StoredEvent[][] = [];
      for (let after = tail; ;) {
        const page = await store().readAll(after, 3);
        expect(page.length).toBeLessThanOrEqual(3);
        const last = page.at(-1);
        if (!last) break;
        pages.push(page);
        after = last.position;
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(await readAllAfter(store(), tail));
      expect(pages.flat().map((s) => s.event)).toEqual(
        Array.from({ length: 7 }, (_, i) => orderReserved(`o${i}`)),
      );
    });

    it('keeps each event in its envelope: id, schema version, time, correlation, causation and buyer', async () => {
      const tail = await tailPosition(store());
      const [first] = wrap([orderReserved('o1')], {
        correlationId: 'corr-1',
        causationId: 'cause-1',
        userId: 'user-1',
        occurredAt: '2026-12-03T10:11:12.345Z',
      });
      const [second] = wrap([orderReserved('o2')], { correlationId: 'corr-2' });
      await store().append(uniqueName('order'), [first!], 0);
      await store().append(uniqueName('order'), [second!], 0);
      const read = await readAllAfter(store(), tail);
      const envelopeOf = ({ position: _p, streamId: _s, streamVersion: _v, ...envelope }: StoredEvent) =>
        envelope;
      expect(read.map(envelopeOf)).toEqual([first, second]);
      expect(read.map((s) => s.userId)).toEqual(['user-1', undefined]);
    });

    it('reads an event stored under an older schema version as the current one (upcasting)', async () => {
      // an example evolution: StockAdded v2 says where the units came from; v1 rows predate it
      const upcaster = new EventUpcaster(
        [{ type: 'StockAdded', from: 1, up: (data: object) => ({ ...data, source: 'RESTOCK' }) }],
        { ...EVENT_SCHEMA_VERSIONS, StockAdded: 2 },
      );
      const stream = uniqueName('product');
      const v1: DomainEvent = {
        type: 'StockAdded',
        data: { productId: 7, quantity: 5, addedAt: instant(3) },
      };
      await store().append(stream, wrap([v1], { schemaVersion: 1 }), 0);
      const reader = readWith(store(), upcaster);
      const [read] = (await reader.read(stream)).events;
      expect(read?.schemaVersion).toBe(2);
      expect(read?.event).toEqual({ type: 'StockAdded', data: { ...v1.data, source: 'RESTOCK' } });
      // what the old code reads is untouched, and a version from the future is refused, not guessed at
      expect((await store().read(stream)).events[0]?.event).toEqual(v1);
      await store().append(stream, wrap([v1], { schemaVersion: 3 }), 1);
      await expect(reader.read(stream)).rejects.toBeInstanceOf(UnknownEventSchema);
    });
  });
