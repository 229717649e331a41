import { type DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  VersionConflict,
} from '../../application/index.js';
import type { Journal, MemoryDatabase } from './memory-database.js';

export class MemoryEventStore implements EventStore {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly journal: Journal = null,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  read(streamId: string): Promise<{ events: DomainEvent[]; version: number }> {
    const stream = this.db.streams.get(streamId) ?? [];
    return Promise.resolve({ events: stream.map((s) => s.event), version: stream.length });
  }

  append(
    streamId: string,
    events: readonly DomainEvent[],
    expectedVersion: number,
    metadata: EventMetadata = {},
  ): Promise<number> {
    const stream = this.db.streams.get(streamId) ?? [];
    if (stream.length !== expectedVersion)
      return Promise.reject(new VersionConflict(streamId, expectedVersion));
    const occurredAt = this.now();
    const stored: StoredEvent[] = events.map((event, i) => ({
      position: this.db.events.length + i + 1,
      streamId,
      streamVersion: expectedVersion + i + 1,
      event: structuredClone(event),
      metadata: { ...metadata },
      occurredAt,
    }));
    const { db } = this;
    const hadStream = db.streams.has(streamId);
    db.streams.set(streamId, [...stream, ...stored]);
    db.events.push(...stored);
    this.journal?.undo.push(() => {
      db.events.splice(db.events.length - stored.length, stored.length);
      if (hadStream) db.streams.set(streamId, stream);
      else db.streams.delete(streamId);
    });
    return Promise.resolve(expectedVersion + events.length);
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    // positions are 1..n with no gaps, so position p sits at index p - 1
    return Promise.resolve(
      this.db.events.slice(Math.max(0, afterPosition), Math.max(0, afterPosition) + limit),
    );
  }
}
