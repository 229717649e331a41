import type { DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  VersionConflict,
} from '../../application/index.js';
import { isDuplicateKey } from './mysql-errors.js';
import { type EventRow, EventSchema, fromJson } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';

const toStored = (row: EventRow): StoredEvent => ({
  position: Number(row.position),
  streamId: row.streamId,
  streamVersion: row.streamVersion,
  event: { type: row.type, data: fromJson(row.payload) } as DomainEvent,
  metadata: fromJson<EventMetadata | null>(row.metadata) ?? {},
  occurredAt: row.occurredAt.toISOString(),
});

/**
 * The `event_store` table. UNIQUE(stream_id, stream_version) is the optimistic concurrency: two writers at
 * the same expected version both insert version n + 1, and the second gets a duplicate key.
 */
export class MySqlEventStore implements EventStore {
  constructor(
    private readonly session: MySqlSession,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  read(streamId: string): Promise<{ events: DomainEvent[]; version: number }> {
    return this.session.run('read stream', async (em) => {
      const rows = await em.find(
        EventSchema,
        { streamId },
        { orderBy: { streamVersion: 'asc' }, disableIdentityMap: true },
      );
      return { events: rows.map((row) => toStored(row).event), version: rows.length };
    });
  }

  append(
    streamId: string,
    events: readonly DomainEvent[],
    expectedVersion: number,
    metadata: EventMetadata = {},
  ): Promise<number> {
    if (events.length === 0) return Promise.resolve(expectedVersion);
    return this.session.run('append', async (em) => {
      // a stream ahead of the expected version collides on the unique key; one behind it is caught here
      if (expectedVersion > 0) {
        const at = await em.count(EventSchema, { streamId, streamVersion: expectedVersion });
        if (at === 0) throw new VersionConflict(streamId, expectedVersion);
      }
      const occurredAt = new Date(this.now());
      try {
        await em.insertMany(
          EventSchema,
          events.map((event, i) => ({
            streamId,
            streamVersion: expectedVersion + i + 1,
            type: event.type,
            payload: event.data,
            metadata,
            occurredAt,
          })),
        );
      } catch (error) {
        if (isDuplicateKey(error)) throw new VersionConflict(streamId, expectedVersion);
        throw error;
      }
      return expectedVersion + events.length;
    });
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return this.session.run('read all', async (em) => {
      const rows = await em.find(
        EventSchema,
        { position: { $gt: afterPosition } },
        { orderBy: { position: 'asc' }, limit, disableIdentityMap: true },
      );
      return rows.map(toStored);
    });
  }
}
