import {
  type NewOutboxMessage,
  type OpenOutboxStatus,
  type Outbox,
  type OutboxMessage,
  OutboxStatus,
} from '../../application/index.js';
import { type MemoryDatabase, type MemorySession, sessionOf } from './memory-database.js';

export class MemoryOutbox implements Outbox {
  private readonly session: MemorySession;

  constructor(source: MemoryDatabase | MemorySession) {
    this.session = sessionOf(source);
  }

  add(message: NewOutboxMessage, now: string): Promise<void> {
    return this.addMany([message], now);
  }

  addMany(messages: readonly NewOutboxMessage[], now: string): Promise<void> {
    return this.session.write((tables) => {
      const ids = new Set<string>();
      for (const { messageId } of messages) {
        if (tables.get('outbox', messageId) || ids.has(messageId))
          throw new Error(`duplicate outbox message id ${messageId}`);
        ids.add(messageId);
      }
      for (const message of messages)
        tables.set('outbox', message.messageId, {
          ...message,
          status: OutboxStatus.PENDING,
          attempts: 0,
          lastError: null,
          createdAt: now,
          updatedAt: now,
        });
    });
  }

  get(messageId: string): Promise<OutboxMessage | null> {
    return Promise.resolve(this.session.get('outbox', messageId) ?? null);
  }

  markSent(messageId: string, now: string): Promise<void> {
    return this.markSentMany([messageId], now);
  }

  markSentMany(messageIds: readonly string[], now: string): Promise<void> {
    return this.updateMany(messageIds, (row) =>
      row.status === OutboxStatus.CONSUMED
        ? row
        : { ...row, status: OutboxStatus.SENT, attempts: row.attempts + 1, updatedAt: now },
    );
  }

  markConsumed(messageId: string, now: string): Promise<void> {
    return this.markConsumedMany([messageId], now);
  }

  markConsumedMany(messageIds: readonly string[], now: string): Promise<void> {
    return this.updateMany(messageIds, (row) => ({ ...row, status: OutboxStatus.CONSUMED, updatedAt: now }));
  }

  async markFailed(
    messageId: string,
    error: string,
    now: string,
    maxAttempts: number,
  ): Promise<OutboxStatus> {
    const row = await this.update(messageId, (r) => {
      if (r.status === OutboxStatus.CONSUMED) return r;
      const attempts = r.attempts + 1;
      const status = attempts >= maxAttempts ? OutboxStatus.DEAD : OutboxStatus.FAILED;
      return { ...r, status, attempts, lastError: error, updatedAt: now };
    });
    return row?.status ?? OutboxStatus.DEAD;
  }

  due(
    query: Readonly<{ retryBefore: string; staleSentBefore: string; limit: number }>,
  ): Promise<OutboxMessage[]> {
    const rows = this.session
      .rows('outbox')
      .filter(
        (r) =>
          ((r.status === OutboxStatus.PENDING || r.status === OutboxStatus.FAILED) &&
            r.updatedAt < query.retryBefore) ||
          (r.status === OutboxStatus.SENT && r.updatedAt < query.staleSentBefore),
      );
    rows.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    return Promise.resolve(rows.slice(0, query.limit));
  }

  countByStatus(): Promise<Record<OutboxStatus, number>> {
    const counts: Record<OutboxStatus, number> = {
      [OutboxStatus.PENDING]: 0,
      [OutboxStatus.SENT]: 0,
      [OutboxStatus.CONSUMED]: 0,
      [OutboxStatus.FAILED]: 0,
      [OutboxStatus.DEAD]: 0,
    };
    for (const row of this.session.rows('outbox')) counts[row.status] += 1;
    return Promise.resolve(counts);
  }

  countOpen(): Promise<Record<OpenOutboxStatus, number>> {
    const counts: Record<OpenOutboxStatus, number> = {
      [OutboxStatus.PENDING]: 0,
      [OutboxStatus.SENT]: 0,
      [OutboxStatus.FAILED]: 0,
      [OutboxStatus.DEAD]: 0,
    };
    for (const row of this.session.rows('outbox'))
      if (row.status !== OutboxStatus.CONSUMED) counts[row.status] += 1;
    return Promise.resolve(counts);
  }

  /** Changes several rows in one write (one statement on MySQL), skipping unknown ids. */
  private updateMany(
    messageIds: readonly string[],
    change: (row: OutboxMessage) => OutboxMessage,
  ): Promise<void> {
    return this.session.write((tables) => {
      for (const messageId of new Set(messageIds)) {
        const row = tables.get('outbox', messageId);
        if (row) tables.set('outbox', messageId, change(row));
      }
    });
  }

  private update(
    messageId: string,
    change: (row: OutboxMessage) => OutboxMessage,
  ): Promise<OutboxMessage | null> {
    return this.session.write((tables) => {
      const row = tables.get('outbox', messageId);
      if (!row) return null;
      const next = change(row);
      tables.set('outbox', messageId, next);
      return next;
    });
  }
}
