import {
  type NewOutboxMessage,
  type Outbox,
  type OutboxMessage,
  OutboxStatus,
} from '../../application/index.js';
import { journaledSet, type Journal, type MemoryDatabase } from './memory-database.js';

export class MemoryOutbox implements Outbox {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly journal: Journal = null,
  ) {}

  add(message: NewOutboxMessage, now: string): Promise<void> {
    if (this.db.outbox.has(message.messageId))
      return Promise.reject(new Error(`duplicate outbox message id ${message.messageId}`));
    const row: OutboxMessage = {
      ...message,
      status: OutboxStatus.PENDING,
      attempts: 0,
      lastError: null,
      createdAt: now,
      updatedAt: now,
    };
    journaledSet(this.journal, this.db.outbox, message.messageId, row);
    return Promise.resolve();
  }

  get(messageId: string): Promise<OutboxMessage | null> {
    return Promise.resolve(this.db.outbox.get(messageId) ?? null);
  }

  markSent(messageId: string, now: string): Promise<void> {
    this.update(messageId, (row) =>
      row.status === OutboxStatus.CONSUMED
        ? row
        : { ...row, status: OutboxStatus.SENT, attempts: row.attempts + 1, updatedAt: now },
    );
    return Promise.resolve();
  }

  markConsumed(messageId: string, now: string): Promise<void> {
    this.update(messageId, (row) => ({ ...row, status: OutboxStatus.CONSUMED, updatedAt: now }));
    return Promise.resolve();
  }

  markFailed(messageId: string, error: string, now: string, maxAttempts: number): Promise<OutboxStatus> {
    const row = this.update(messageId, (r) => {
      if (r.status === OutboxStatus.CONSUMED) return r;
      const attempts = r.attempts + 1;
      const status = attempts >= maxAttempts ? OutboxStatus.DEAD : OutboxStatus.FAILED;
      return { ...r, status, attempts, lastError: error, updatedAt: now };
    });
    return Promise.resolve(row?.status ?? OutboxStatus.DEAD);
  }

  due(
    query: Readonly<{ retryBefore: string; staleSentBefore: string; limit: number }>,
  ): Promise<OutboxMessage[]> {
    const rows = [...this.db.outbox.values()].filter(
      (r) =>
        ((r.status === OutboxStatus.PENDING || r.status === OutboxStatus.FAILED) &&
          r.updatedAt < query.retryBefore) ||
        (r.status === OutboxStatus.SENT && r.updatedAt < query.staleSentBefore),
    );
    rows.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    return Promise.resolve(rows.slice(0, query.limit));
  }

  countByStatus(): Promise<Record<OutboxStatus, number>> {
    const counts = {
      [OutboxStatus.PENDING]: 0,
      [OutboxStatus.SENT]: 0,
      [OutboxStatus.CONSUMED]: 0,
      [OutboxStatus.FAILED]: 0,
      [OutboxStatus.DEAD]: 0,
    };
    for (const row of this.db.outbox.values()) counts[row.status] += 1;
    return Promise.resolve(counts);
  }

  private update(messageId: string, change: (row: OutboxMessage) => OutboxMessage): OutboxMessage | null {
    const row = this.db.outbox.get(messageId);
    if (!row) return null;
    const next = change(row);
    journaledSet(this.journal, this.db.outbox, messageId, next);
    return next;
  }
}
