import { type DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  VersionConflict,
} from '../../application/index.js';
import { type MemoryDatabase, type MemorySession, sessionOf } from './memory-database.js';

export class MemoryEventStore implements EventStore {
  private readonly session: MemorySession;

  constructor(
    source: MemoryDatabase | MemorySession,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {
    this.session = sessionOf(source);
  }

  read(streamId: string): Promise<{ events: DomainEvent[]; version: number }> {
    const stream = this.session.get('streams', streamId) ?? [];
    return Promise.resolve({ events: stream.map((s) => s.event), version: stream.length });
  }

  append(
    streamId: string,
    events: readonly DomainEvent[],
    expectedVersion: number,
    metadata: EventMetadata = {},
  ): Promise<number> {
    return this.session.write((tables) => {
      const stream = tables.get('streams', streamId) ?? [];
      if (stream.length !== expectedVersion) throw new VersionConflict(streamId, expectedVersion);
      const last = tables.log().at(-1)?.position ?? 0;
      const occurredAt = this.now();
      const stored: StoredEvent[] = events.map((event, i) => ({
        position: last + i + 1,
        streamId,
        streamVersion: expectedVersion + i + 1,
        event: structuredClone(event),
        metadata: { ...metadata },
        occurredAt,
      }));
      tables.set('streams', streamId, [...stream, ...stored]);
      tables.appendToLog(stored);
      return expectedVersion + events.length;
    });
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    const log = this.session.log();
    // positions only grow, so the first event after `afterPosition` is found by bisection
    let low = 0;
    let high = log.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (log[middle]!.position <= afterPosition) low = middle + 1;
      else high = middle;
    }
    return Promise.resolve(log.slice(low, low + limit));
  }
}
