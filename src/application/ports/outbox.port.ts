/** The local message table: 0 pending, 1 sent, 2 consumed, -1 failed, -2 dead. */
export const OutboxStatus = { PENDING: 0, SENT: 1, CONSUMED: 2, FAILED: -1, DEAD: -2 } as const;
export type OutboxStatus = (typeof OutboxStatus)[keyof typeof OutboxStatus];
/** Every status but CONSUMED: the rows that still need the pipeline, or a person. */
export type OpenOutboxStatus = Exclude<OutboxStatus, typeof OutboxStatus.CONSUMED>;

export type OutboxMessage = Readonly<{
  messageId: string;
  orderId: string;
  topic: string;
  key: string;
  payload: string;
  headers: Readonly<Record<string, string>>;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}>;

export type NewOutboxMessage = Pick<
  OutboxMessage,
  'messageId' | 'orderId' | 'topic' | 'key' | 'payload' | 'headers'
>;

export interface Outbox {
  add(message: NewOutboxMessage, now: string): Promise<void>;
  /** Several rows at once, each as `add` would; all or nothing. */
  addMany(messages: readonly NewOutboxMessage[], now: string): Promise<void>;
  get(messageId: string): Promise<OutboxMessage | null>;
  /** Moves a row forward only: a consumed row is never marked sent again. */
  markSent(messageId: string, now: string): Promise<void>;
  /** `markSent` for several rows at once (one statement for a published batch). */
  markSentMany(messageIds: readonly string[], now: string): Promise<void>;
  markConsumed(messageId: string, now: string): Promise<void>;
  /** `markConsumed` for several rows at once. */
  markConsumedMany(messageIds: readonly string[], now: string): Promise<void>;
  /**
   * Counts a failed attempt. `attempts` counts every publish, successful or not, so a row that is sent again
   * and again without being consumed also runs out: it goes DEAD once it has had `maxAttempts` attempts.
   */
  markFailed(messageId: string, error: string, now: string, maxAttempts: number): Promise<OutboxStatus>;
  /**
   * Rows to (re)send, oldest first: pending or failed rows last touched before `retryBefore`,
   * and sent rows not consumed since `staleSentBefore`.
   */
  due(
    query: Readonly<{ retryBefore: string; staleSentBefore: string; limit: number }>,
  ): Promise<OutboxMessage[]>;
  /** Every row, consumed ones included: a scan of the whole table, which is never pruned (tests and tools). */
  countByStatus(): Promise<Record<OutboxStatus, number>>;
  /**
   * The rows not consumed yet, by status: what the gauges and the dashboard show. The consumed rows are most of
   * the table and only grow, so they are not counted: on MySQL this reads only the open ranges of the
   * (status, created_at) index.
   */
  countOpen(): Promise<Record<OpenOutboxStatus, number>>;
}
