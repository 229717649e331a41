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

  // async: an event the upcaster refuses rejects the read, as it does on MySQL
  async read(streamId: string): Promise<Stream> {
    return this.stream(streamId);
  }

  async readMany(streamIds: readonly string[]): Promise<Map<string, Stream>> {
    const found = new Map<string, Stream>();
    for (const streamId of streamIds) found.set(streamId, this.stream(streamId));
    return found;
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

  async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
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
