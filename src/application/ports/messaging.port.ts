export const Topics = {
  ORDERS_RESERVED: 'seckill.orders.reserved',
  STOCK_COMPENSATION: 'seckill.stock.compensation',
} as const;
export type Topic = (typeof Topics)[keyof typeof Topics];

export const ConsumerGroups = { COMMIT: 'seckill-commit', COMPENSATION: 'seckill-compensation' } as const;

export type OutboundMessage = Readonly<{
  topic: string;
  key: string;
  payload: string;
  headers: Readonly<Record<string, string>>;
}>;

export type InboundMessage = OutboundMessage & Readonly<{ partition: number; offset: string }>;

/** Resolves once the broker has the message (acks from all in-sync replicas on Kafka). */
export interface MessagePublisher {
  publish(message: OutboundMessage): Promise<void>;
  /**
   * Many messages in one request to the broker (on Kafka, one record batch per partition, so a consumer
   * fetches them together). Resolves once the broker has every one of them; on a failure some may have
   * been taken, and sending them again is safe (consumers are idempotent).
   */
  publishMany(messages: readonly OutboundMessage[]): Promise<void>;
}

/**
 * Delivers at least once. A batch is acknowledged only when the handler resolves; a handler that throws
 * gets the same messages again later.
 */
export interface MessageSubscriber {
  /** `onAssigned`: called each time this member is given its partitions (it joined, or the group rebalanced). */
  subscribe(
    spec: Readonly<{ topic: string; groupId: string; onAssigned?: (() => void) | undefined }>,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void>;
  stop(): Promise<void>;
}
