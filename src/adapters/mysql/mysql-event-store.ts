import {
  defaultUpcaster,
  type EventEnvelope,
  type EventStore,
  type EventUpcaster,
  type Stream,
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
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  payload: unknown;
  metadata: unknown;
  correlation_id: string;
  causation_id: string | null;
  occurred_at: string | Date;
}>;

const COLUMNS =
  'position, event_id, stream_id, stream_version, type, schema_version, payload, metadata, correlation_id, causation_id, occurred_at';

type Metadata = Readonly<{ userId?: string; traceparent?: string }>;

const toStored = (upcaster: EventUpcaster, row: EventRecord): StoredEvent => {
  const { userId, traceparent } = fromJson<Metadata | null>(row.metadata) ?? {};
  return {
    position: Number(row.position),
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    // the seam: an event written under an older schema is read as the current one
    event: upcaster.read({ type: row.type, schemaVersion: row.schema_version, data: fromJson(row.payload) }),
    schemaVersion: upcaster.versionOf(row.type),
    occurredAt: fromDateTime(row.occurred_at),
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    ...(userId === undefined ? {} : { userId }),
    ...(traceparent === undefined ? {} : { traceparent }),
  };
};

const metadataOf = ({ userId, traceparent }: EventEnvelope): string =>
  userId === undefined && traceparent === undefined ? '{}' : JSON.stringify({ userId, traceparent });

const toRow = (streamId: string, version: number, e: EventEnvelope): unknown[] => [
  e.eventId,
  streamId,
  version,
  e.event.type,
  e.schemaVersion,
  JSON.stringify(e.event.data),
  metadataOf(e),
  e.correlationId,
  e.causationId,
  toDateTime(e.occurredAt),
];

/**
 * The `event_store` table. UNIQUE(stream_id, stream_version) is the optimistic concurrency: two writers at
 * the same expected version both insert version n + 1, and the second gets a duplicate key. Plain SQL: a
 * batch of appends is one multi-row INSERT, a batch of reads one SELECT.
 */
export class MySqlEventStore implements EventStore {
  constructor(
    private readonly session: MySqlSession,
    private readonly upcaster: EventUpcaster = defaultUpcaster,
  ) {}

  read(streamId: string): Promise<Stream> {
    return this.session.run('read stream', async ({ sql }) => {
      const rows = await sql.execute<EventRecord[]>(
        `SELECT ${COLUMNS} FROM event_store WHERE stream_id = ? ORDER BY stream_version`,
        [streamId],
      );
      return { events: rows.map((row) => toStored(this.upcaster, row)), version: rows.length };
    });
  }

  readMany(streamIds: readonly string[]): Promise<Map<string, Stream>> {
    const found = new Map<string, { events: StoredEvent[]; version: number }>();
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
        stream.events.push(toStored(this.upcaster, row));
        stream.version += 1;
      }
      return found;
    });
  }

  async append(streamId: string, events: readonly EventEnvelope[], expectedVersion: number): Promise<number> {
    await this.appendMany([{ streamId, events, expectedVersion }]);
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
      const rows = writes.flatMap(({ streamId, events, expectedVersion }) =>
        events.map((event, i) => toRow(streamId, expectedVersion + i + 1, event)),
      );
      try {
        await db.sql.query(
          'INSERT INTO event_store (event_id, stream_id, stream_version, type, schema_version, payload, metadata, correlation_id, causation_id, occurred_at) VALUES ?',
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
      ).map((row) => toStored(this.upcaster, row)),
    );
  }
}
