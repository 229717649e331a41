import {
  defaultUpcaster,
  type EventEnvelope,
  type EventUpcaster,
  type EventStore,
  type Stream,
  type StoredEvent,
  type StreamAppend,
  upcastStored,
  VersionConflict,
} from '../../application/index.js';
import { type MemoryDatabase, type MemorySession, sessionOf } from './memory-database.js';

export class MemoryEventStore implements EventStore {
  private readonly session: MemorySession;

  constructor(
    source: MemoryDatabase | MemorySession,
    private readonly upcaster: EventUpcaster = defaultUpcaster,
  ) {
    this.session = sessionOf(source);
  }

  // an event the upcaster refuses rejects the read (a throw in the executor), as it does on MySQL
  read(streamId: string): Promise<Stream> {
    return new Promise((resolve) => resolve(this.stream(streamId)));
  }

  readMany(streamIds: readonly string[]): Promise<Map<string, Stream>> {
    return new Promise((resolve) => {
      const found = new Map<string, Stream>();
      for (const streamId of streamIds) found.set(streamId, this.stream(streamId));
      resolve(found);
    });
  }

  async append(streamId: string, events: readonly EventEnvelope[], expectedVersion: number): Promise<number> {
    await this.appendMany([{ streamId, events, expectedVersion }]);
    return expectedVersion + events.length;
  }

  appendMany(appends: readonly StreamAppend[]): Promise<void> {
    return this.session.write((tables) => {
      for (const { streamId, expectedVersion } of appends)
        if ((tables.get('streams', streamId) ?? []).length !== expectedVersion)
          throw new VersionConflict(streamId, expectedVersion);
      let position = tables.log().at(-1)?.position ?? 0;
      for (const { streamId, events, expectedVersion } of appends) {
        if (events.length === 0) continue;
        const stored: StoredEvent[] = events.map((envelope, i) => ({
          ...structuredClone(envelope),
          position: ++position,
          streamId,
          streamVersion: expectedVersion + i + 1,
        }));
        tables.set('streams', streamId, [...(tables.get('streams', streamId) ?? []), ...stored]);
        tables.appendToLog(stored);
      }
    });
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return new Promise((resolve) => resolve(this.page(afterPosition, limit)));
  }

  private page(afterPosition: number, limit: number): StoredEvent[] {
    const log = this.session.log();
    // positions only grow, so the first event after `afterPosition` is found by bisection
    let low = 0;
    let high = log.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (log[middle]!.position <= afterPosition) low = middle + 1;
      else high = middle;
    }
    return log.slice(low, low + limit).map((e) => upcastStored(this.upcaster, e));
  }

  private stream(streamId: string): Stream {
    const stream = this.session.get('streams', streamId) ?? [];
    return { events: stream.map((e) => upcastStored(this.upcaster, e)), version: stream.length };
  }
}
