import { raw } from '@mikro-orm/core';
import {
  type NewOutboxMessage,
  type OpenOutboxStatus,
  type Outbox,
  type OutboxMessage,
  OutboxStatus,
} from '../../application/index.js';
import { isDuplicateKey } from './mysql-errors.js';
import { fromJson, type OutboxRow, OutboxSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';
import { marks, toDateTime } from './mysql-sql.js';

const toMessage = (row: OutboxRow): OutboxMessage => ({
  messageId: row.messageId,
  orderId: row.orderId,
  topic: row.topic,
  key: row.key,
  payload: row.payload,
  headers: fromJson<Record<string, string> | null>(row.headers) ?? {},
  status: row.status as OutboxStatus,
  attempts: row.attempts,
  lastError: row.lastError,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/**
 * `outbox_message`, the local message table: written in the business transaction, published after it. The
 * rows of a batch go in with one multi-row INSERT and change status with one UPDATE … IN (…).
 */
export class MySqlOutbox implements Outbox {
  constructor(private readonly session: MySqlSession) {}

  add(message: NewOutboxMessage, now: string): Promise<void> {
    return this.addMany([message], now);
  }

  addMany(messages: readonly NewOutboxMessage[], now: string): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return this.session.run('add outbox rows', async ({ sql }) => {
      const at = toDateTime(now);
      try {
        await sql.query(
          'INSERT INTO outbox_message (message_id, order_id, topic, `key`, payload, headers, status, attempts, created_at, updated_at) VALUES ?',
          [
            messages.map((m) => [
              m.messageId,
              m.orderId,
              m.topic,
              m.key,
              m.payload,
              JSON.stringify(m.headers),
              OutboxStatus.PENDING,
              0,
              at,
              at,
            ]),
          ],
        );
      } catch (error) {
        if (isDuplicateKey(error))
          throw new Error(`duplicate outbox message id ${messages.map((m) => m.messageId).join(', ')}`);
        throw error;
      }
    });
  }

  get(messageId: string): Promise<OutboxMessage | null> {
    return this.session.run('read outbox row', async ({ em }) => {
      const row = await em.findOne(OutboxSchema, { messageId }, { disableIdentityMap: true });
      return row ? toMessage(row) : null;
    });
  }

  markSent(messageId: string, now: string): Promise<void> {
    return this.markSentMany([messageId], now);
  }

  markSentMany(messageIds: readonly string[], now: string): Promise<void> {
    if (messageIds.length === 0) return Promise.resolve();
    return this.session.run('mark sent', async ({ sql }) => {
      await sql.query(
        `UPDATE outbox_message SET status = ?, attempts = attempts + 1, updated_at = ? WHERE message_id IN (${marks(messageIds.length)}) AND status <> ?`,
        [OutboxStatus.SENT, toDateTime(now), ...messageIds, OutboxStatus.CONSUMED],
      );
    });
  }

  markConsumed(messageId: string, now: string): Promise<void> {
    return this.markConsumedMany([messageId], now);
  }

  markConsumedMany(messageIds: readonly string[], now: string): Promise<void> {
    if (messageIds.length === 0) return Promise.resolve();
    return this.session.run('mark consumed', async ({ sql }) => {
      await sql.query(
        `UPDATE outbox_message SET status = ?, updated_at = ? WHERE message_id IN (${marks(messageIds.length)})`,
        [OutboxStatus.CONSUMED, toDateTime(now), ...messageIds],
      );
    });
  }

  markFailed(messageId: string, error: string, now: string, maxAttempts: number): Promise<OutboxStatus> {
    return this.session.run('mark failed', async ({ em }) => {
      // status is computed from the attempts before this one is counted (SET assigns left to right)
      await em.nativeUpdate(
        OutboxSchema,
        { messageId, status: { $ne: OutboxStatus.CONSUMED } },
        {
          status: raw('CASE WHEN attempts + 1 >= ? THEN ? ELSE ? END', [
            maxAttempts,
            OutboxStatus.DEAD,
            OutboxStatus.FAILED,
          ]),
          attempts: raw('attempts + 1'),
          lastError: error.slice(0, 2_000),
          updatedAt: new Date(now),
        },
      );
      const row = await em.findOne(
        OutboxSchema,
        { messageId },
        { fields: ['status'], disableIdentityMap: true },
      );
      return (row?.status ?? OutboxStatus.DEAD) as OutboxStatus;
    });
  }

  due(
    query: Readonly<{ retryBefore: string; staleSentBefore: string; limit: number }>,
  ): Promise<OutboxMessage[]> {
    return this.session.run('due outbox rows', async ({ em }) => {
      const rows = await em.find(
        OutboxSchema,
        {
          $or: [
            {
              status: { $in: [OutboxStatus.PENDING, OutboxStatus.FAILED] },
              updatedAt: { $lt: new Date(query.retryBefore) },
            },
            { status: OutboxStatus.SENT, updatedAt: { $lt: new Date(query.staleSentBefore) } },
          ],
        },
        { orderBy: { createdAt: 'asc', id: 'asc' }, limit: query.limit, disableIdentityMap: true },
      );
      return rows.map(toMessage);
    });
  }

  countByStatus(): Promise<Record<OutboxStatus, number>> {
    return this.session.run('count outbox rows', async ({ sql }) => {
      const counts: Record<OutboxStatus, number> = {
        [OutboxStatus.PENDING]: 0,
        [OutboxStatus.SENT]: 0,
        [OutboxStatus.CONSUMED]: 0,
        [OutboxStatus.FAILED]: 0,
        [OutboxStatus.DEAD]: 0,
      };
      const rows = await sql.query<Array<{ status: number; n: number | string }>>(
        'SELECT status, COUNT(*) AS n FROM outbox_message GROUP BY status',
        [],
      );
      for (const row of rows) counts[row.status as OutboxStatus] = Number(row.n);
      return counts;
    });
  }

  countOpen(): Promise<Record<OpenOutboxStatus, number>> {
    return this.session.run('count open outbox rows', async ({ sql }) => {
      const counts: Record<OpenOutboxStatus, number> = {
        [OutboxStatus.PENDING]: 0,
        [OutboxStatus.SENT]: 0,
        [OutboxStatus.FAILED]: 0,
        [OutboxStatus.DEAD]: 0,
      };
      // one range of the (status, created_at) index per open status; the consumed rows are never read
      const rows = await sql.query<Array<{ status: number; n: number | string }>>(
        'SELECT status, COUNT(*) AS n FROM outbox_message WHERE status IN (?, ?, ?, ?) GROUP BY status',
        Object.keys(counts).map(Number),
      );
      for (const row of rows) counts[row.status as OpenOutboxStatus] = Number(row.n);
      return counts;
    });
  }
}
