import { raw } from '@mikro-orm/core';
import {
  type NewOutboxMessage,
  type Outbox,
  type OutboxMessage,
  OutboxStatus,
} from '../../application/index.js';
import { isDuplicateKey } from './mysql-errors.js';
import { fromJson, type OutboxRow, OutboxSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';

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

/** `outbox_message`, the local message table: written in the business transaction, published after it. */
export class MySqlOutbox implements Outbox {
  constructor(private readonly session: MySqlSession) {}

  add(message: NewOutboxMessage, now: string): Promise<void> {
    return this.addMany([message], now);
  }

  addMany(messages: readonly NewOutboxMessage[], now: string): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return this.session.run('add outbox rows', async (em) => {
      const at = new Date(now);
      try {
        await em.insertMany(
          OutboxSchema,
          messages.map((message) => ({
            ...message,
            headers: { ...message.headers },
            status: OutboxStatus.PENDING,
            attempts: 0,
            lastError: null,
            createdAt: at,
            updatedAt: at,
          })),
        );
      } catch (error) {
        if (isDuplicateKey(error))
          throw new Error(`duplicate outbox message id ${messages.map((m) => m.messageId).join(', ')}`);
        throw error;
      }
    });
  }

  get(messageId: string): Promise<OutboxMessage | null> {
    return this.session.run('read outbox row', async (em) => {
      const row = await em.findOne(OutboxSchema, { messageId }, { disableIdentityMap: true });
      return row ? toMessage(row) : null;
    });
  }

  markSent(messageId: string, now: string): Promise<void> {
    return this.session.run('mark sent', async (em) => {
      await em.nativeUpdate(
        OutboxSchema,
        { messageId, status: { $ne: OutboxStatus.CONSUMED } },
        { status: OutboxStatus.SENT, attempts: raw('attempts + 1'), updatedAt: new Date(now) },
      );
    });
  }

  markConsumed(messageId: string, now: string): Promise<void> {
    return this.session.run('mark consumed', async (em) => {
      await em.nativeUpdate(
        OutboxSchema,
        { messageId },
        { status: OutboxStatus.CONSUMED, updatedAt: new Date(now) },
      );
    });
  }

  markConsumedMany(messageIds: readonly string[], now: string): Promise<void> {
    if (messageIds.length === 0) return Promise.resolve();
    return this.session.run('mark consumed', async (em) => {
      await em.nativeUpdate(
        OutboxSchema,
        { messageId: { $in: [...messageIds] } },
        { status: OutboxStatus.CONSUMED, updatedAt: new Date(now) },
      );
    });
  }

  markFailed(messageId: string, error: string, now: string, maxAttempts: number): Promise<OutboxStatus> {
    return this.session.run('mark failed', async (em) => {
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
    return this.session.run('due outbox rows', async (em) => {
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
    return this.session.run('count outbox rows', async (em) => {
      const counts: Record<OutboxStatus, number> = {
        [OutboxStatus.PENDING]: 0,
        [OutboxStatus.SENT]: 0,
        [OutboxStatus.CONSUMED]: 0,
        [OutboxStatus.FAILED]: 0,
        [OutboxStatus.DEAD]: 0,
      };
      const rows: Array<{ status: number; n: number | string }> = await em
        .getConnection()
        .execute('SELECT status, COUNT(*) AS n FROM outbox_message GROUP BY status');
      for (const row of rows) counts[row.status as OutboxStatus] = Number(row.n);
      return counts;
    });
  }
}
