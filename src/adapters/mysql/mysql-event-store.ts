import type { DomainEvent } from '../../domain/index.js';
import {
  type EventMetadata,
  type EventStore,
  type StoredEvent,
  type StreamAppend,
  VersionConflict,
} from '../../application/index.js';
import { isDuplicateKey } from './mysql-errors.js';
import { fromJson } from './mysql-schema.js';
import type { Db, MySqlSession } from './mysql-session.js';
import { fromDateTime, marks, toDateTime } from './mysql-sql.js';

type EventRecord = Readonly<{
  position: number | string;
  stream_id: string;
  stream_version: number;
  type: string;
  payload: unknown;
  metadata: unknown;
  occurred_at: string | Date;
}>;

const COLUMNS = 'position, stream_id, stream_version, type, payload, metadata, occurred_at';

const toStored = (row: EventRecord): StoredEvent => ({
  position: Number(row.position),
  streamId: row.stream_id,
  streamVersion: row.stream_version,
  event: { type: row.type, data: fromJson(row.payload) } as DomainEvent,
  metadata: fromJson<EventMetadata | null>(row.metadata) ?? {},
  occurredAt: fromDateTime(row.occurred_at),
});

type Stream = { events: DomainEvent[]; version: number };

/**
 * The `event_store` table. UNIQUE(stream_id, stream_version) is the optimistic concurrency: two writers at
 * the same expected version both insert version n + 1, and the second gets a duplicate key. Plain SQL: a
 * batch of appends is one multi-row INSERT, a batch of reads one SELECT.
 */
export class MySqlEventStore implements EventStore {
  constructor(
    private readonly session: MySqlSession,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  read(streamId: string): Promise<Stream> {
    return this.session.run('read stream', async ({ sql }) => {
      const rows = await sql.execute<EventRecord[]>(
        `SELECT ${COLUMNS} FROM event_store WHERE stream_id = ? ORDER BY stream_version`,
        [streamId],
      );
      return { events: rows.map((row) => toStored(row).event), version: rows.length };
    });
  }

  readMany(streamIds: readonly string[]): Promise<Map<string, Stream>> {
    const found = new Map<string, Stream>();
    for (const streamId of streamIds) found.set(streamId, { events: [], version: 0 });
    if (streamIds.length === 0) return Promise.resolve(found);
    const unique = [...found.keys()];
    return this.session.run('read streams', async ({ sql }) => {
      const rows = await sql.query<EventRecord[]>(
        `SELECT ${COLUMNS} FROM event_store WHERE stream_id IN (${marks(unique.length)}) ORDER BY stream_id, stream_version`,
        unique,
      );
      for (const row of rows) {
        const stream = found.get(row.stream_id)!;
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
    return this.session.run('append', async (db) => {
      // a stream ahead of its expected version collides on the unique key; one behind it is caught here
      // (a new stream, expected at 0, cannot be behind: the batch of new orders skips this read)
      const behind = await this.firstOffVersion(
        db,
        writes.filter((a) => a.expectedVersion > 0),
        (version, expected) => version < expected,
      );
      if (behind) throw new VersionConflict(behind.streamId, behind.expectedVersion);
      const occurredAt = toDateTime(this.now());
      const rows = writes.flatMap(({ streamId, events, expectedVersion, metadata = {} }) => {
        const meta = JSON.stringify(metadata);
        return events.map((event, i) => [
          streamId,
          expectedVersion + i + 1,
          event.type,
          JSON.stringify(event.data),
          meta,
          occurredAt,
        ]);
      });
      try {
        await db.sql.query(
          'INSERT INTO event_store (stream_id, stream_version, type, payload, metadata, occurred_at) VALUES ?',
          [rows],
        );
      } catch (error) {
        if (isDuplicateKey(error)) {
          const ahead = await this.firstOffVersion(db, writes, (version, expected) => version > expected);
          const conflict = ahead ?? writes[0]!;
          throw new VersionConflict(conflict.streamId, conflict.expectedVersion);
        }
        throw error;
      }
    });
  }

  /** The first append whose stream's stored version is off its expected one in the given way. */
  private async firstOffVersion(
    { sql }: Db,
    appends: readonly StreamAppend[],
    off: (version: number, expected: number) => boolean,
  ): Promise<StreamAppend | undefined> {
    if (appends.length === 0) return undefined;
    const rows = await sql.query<Array<{ stream_id: string; n: number | string }>>(
      `SELECT stream_id, COUNT(*) AS n FROM event_store WHERE stream_id IN (${marks(appends.length)}) GROUP BY stream_id`,
      appends.map((a) => a.streamId),
    );
    const versions = new Map(rows.map((row) => [row.stream_id, Number(row.n)]));
    return appends.find((a) => off(versions.get(a.streamId) ?? 0, a.expectedVersion));
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return this.session.run('read all', async ({ sql }) =>
      (
        await sql.query<EventRecord[]>(
          `SELECT ${COLUMNS} FROM event_store WHERE position > ? ORDER BY position LIMIT ?`,
          [afterPosition, limit],
        )
      ).map(toStored),
    );
  }
}
