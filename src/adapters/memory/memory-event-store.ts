import { type DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  type StreamAppend,
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

  readMany(streamIds: readonly string[]): Promise<Map<string, { events: DomainEvent[]; version: number }>> {
    const found = new Map<string, { events: DomainEvent[]; version: number }>();
    for (const streamId of streamIds) {
      const stream = this.session.get('streams', streamId) ?? [];
      found.set(streamId, { events: stream.map((s) => s.event), version: stream.length });
    }
    return Promise.resolve(found);
  }

  async append(
    streamId: string,
    events: readonly DomainEvent[],
    expectedVersion: number,
    metadata: EventMetadata = {},
  ): Promise<number> {
    await this.appendMany([{ streamId, events, expectedVersion, metadata }]);
    return expectedVersion + events.length;
  }

  appendMany(appends: readonly StreamAppend[]): Promise<void> {
    return this.session.write((tables) => {
      for (const { streamId, expectedVersion } of appends)
        if ((tables.get('streams', streamId) ?? []).length !== expectedVersion)
          throw new VersionConflict(streamId, expectedVersion);
      const occurredAt = this.now();
      let position = tables.log().at(-1)?.position ?? 0;
      for (const { streamId, events, expectedVersion, metadata = {} } of appends) {
        if (events.length === 0) continue;
        const stored: StoredEvent[] = events.map((event, i) => ({
          position: ++position,
          streamId,
          streamVersion: expectedVersion + i + 1,
          event: structuredClone(event),
          metadata: { ...metadata },
          occurredAt,
        }));
        tables.set('streams', streamId, [...(tables.get('streams', streamId) ?? []), ...stored]);
        tables.appendToLog(stored);
      }
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
