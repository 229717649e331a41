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

/** One stream's new events, for `appendMany`. */
export type StreamAppend = Readonly<{
  streamId: string;
  events: readonly DomainEvent[];
  expectedVersion: number;
  metadata?: EventMetadata;
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
  /** Several streams at once (a batch): each id maps to its events and version; unknown streams are empty. */
  readMany(streamIds: readonly string[]): Promise<Map<string, { events: DomainEvent[]; version: number }>>;
  /**
   * Appends to several streams at once: all or nothing. Throws VersionConflict, writing nothing, when any
   * stream is not at its expected version. Each stream appears at most once.
   */
  appendMany(appends: readonly StreamAppend[]): Promise<void>;
  /** Events with position > afterPosition, in global order. */
  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]>;
}
export const EVENT_STORE = Symbol.for('seckill.EventStore');
