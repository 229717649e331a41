import type { DomainEvent } from '../../domain/index.js';

export type EventMetadata = Readonly<{ correlationId?: string; causationId?: string; userId?: string }>;

export type StoredEvent = Readonly<{
  position: number;
  streamId: string;
  streamVersion: number;
  event: DomainEvent;
  metadata: EventMetadata;
  occurredAt: string;
}>;

/** Append-only store. A stream's version is the number of events in it (0 = no stream). */
export interface EventStore {
  read(streamId: string): Promise<{ events: DomainEvent[]; version: number }>;
  /** Throws VersionConflict when the stream is not at expectedVersion. Returns the new version. */
  append(
    streamId: string,
    events: readonly DomainEvent[],
    expectedVersion: number,
    metadata?: EventMetadata,
  ): Promise<number>;
  /** Events with position > afterPosition, in global order. */
  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]>;
}
export const EVENT_STORE = Symbol.for('seckill.EventStore');
