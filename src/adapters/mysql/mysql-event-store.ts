import type { EntityManager } from '@mikro-orm/mysql';
import type { DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  type StreamAppend,
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

  readMany(streamIds: readonly string[]): Promise<Map<string, { events: DomainEvent[]; version: number }>> {
    return this.session.run('read streams', async (em) => {
      const found = new Map<string, { events: DomainEvent[]; version: number }>();
      for (const streamId of streamIds) found.set(streamId, { events: [], version: 0 });
      if (streamIds.length === 0) return found;
      const rows = await em.find(
        EventSchema,
        { streamId: { $in: [...new Set(streamIds)] } },
        { orderBy: { streamId: 'asc', streamVersion: 'asc' }, disableIdentityMap: true },
      );
      for (const row of rows) {
        const stream = found.get(row.streamId)!;
        stream.events.push(toStored(row).event);
        stream.version += 1;
      }
      return found;
    });
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
    const writes = appends.filter((a) => a.events.length > 0);
    if (writes.length === 0) return Promise.resolve();
    return this.session.run('append', async (em) => {
      // a stream ahead of its expected version collides on the unique key; one behind it is caught here
      const behind = await this.firstOffVersion(
        em,
        writes.filter((a) => a.expectedVersion > 0),
        (version, expected) => version < expected,
      );
      if (behind) throw new VersionConflict(behind.streamId, behind.expectedVersion);
      const occurredAt = new Date(this.now());
      try {
        await em.insertMany(
          EventSchema,
          writes.flatMap(({ streamId, events, expectedVersion, metadata = {} }) =>
            events.map((event, i) => ({
              streamId,
              streamVersion: expectedVersion + i + 1,
              type: event.type,
              payload: event.data,
              metadata,
              occurredAt,
            })),
          ),
        );
      } catch (error) {
        if (isDuplicateKey(error)) {
          const ahead = await this.firstOffVersion(em, writes, (version, expected) => version > expected);
          const conflict = ahead ?? writes[0]!;
          throw new VersionConflict(conflict.streamId, conflict.expectedVersion);
        }
        throw error;
      }
    });
  }

  /** The first append whose stream's stored version is off its expected one in the given way. */
  private async firstOffVersion(
    em: EntityManager,
    appends: readonly StreamAppend[],
    off: (version: number, expected: number) => boolean,
  ): Promise<StreamAppend | undefined> {
    if (appends.length === 0) return undefined;
    const rows: Array<{ stream_id: string; n: number | string }> = await em.getConnection().execute(
      `SELECT stream_id, COUNT(*) AS n FROM event_store WHERE stream_id IN (${appends.map(() => '?').join(', ')}) GROUP BY stream_id`,
      appends.map((a) => a.streamId),
    );
    const versions = new Map(rows.map((row) => [row.stream_id, Number(row.n)]));
    return appends.find((a) => off(versions.get(a.streamId) ?? 0, a.expectedVersion));
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
