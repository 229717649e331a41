import type { DomainEvent } from '../../domain/index.js';

/**
 * A domain event as the store keeps it: the event, and what is known of its making. `correlationId` is the
 * conversation it belongs to (the buyer's request, carried through the outbox, Kafka headers and the
 * consumers); `causationId` is the request, message or event that caused it (null only for a request that
 * gave none). `userId` is the buyer who acted, when one did.
 */
export type EventEnvelope<E extends DomainEvent = DomainEvent> = Readonly<{
  eventId: string;
  schemaVersion: number;
  occurredAt: string;
  correlationId: string;
  causationId: string | null;
  userId?: string;
  /** the W3C traceparent of the sampled trace the event was decided in: work it causes joins that trace */
  traceparent?: string;
  event: E;
}>;

/** An envelope with its place: in the global log (`position`) and in its stream (`streamVersion`, from 1). */
export type StoredEvent<E extends DomainEvent = DomainEvent> = EventEnvelope<E> &
  Readonly<{ position: number; streamId: string; streamVersion: number }>;

export type Stream = Readonly<{ events: StoredEvent[]; version: number }>;

/** One stream's new events, for `appendMany`. `expectedVersion` 0: the stream must not exist yet. */
export type StreamAppend = Readonly<{
  streamId: string;
  events: readonly EventEnvelope[];
  expectedVersion: number;
}>;

/**
 * Append-only store. A stream's version is the number of events in it (0 = no stream). Reads hand back each
 * event as the domain knows it today: an event stored under an older schema version is upcast on the way
 * (`EventUpcaster`).
 */
export interface EventStore {
  read(streamId: string): Promise<Stream>;
  /** Throws VersionConflict when the stream is not at expectedVersion. Returns the new version. */
  append(streamId: string, events: readonly EventEnvelope[], expectedVersion: number): Promise<number>;
  /** Several streams at once (a batch): each id maps to its events and version; unknown streams are empty. */
  readMany(streamIds: readonly string[]): Promise<Map<string, Stream>>;
  /**
   * Appends to several streams at once: all or nothing. Throws VersionConflict, writing nothing, when any
   * stream is not at its expected version. Each stream appears at most once.
   */
  appendMany(appends: readonly StreamAppend[]): Promise<void>;
  /** Events with position > afterPosition, in global order. */
  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]>;
}
