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
}
export const MESSAGE_PUBLISHER = Symbol.for('seckill.MessagePublisher');

/**
 * Delivers at least once. A batch is acknowledged only when the handler resolves; a handler that throws
 * gets the same messages again later.
 */
export interface MessageSubscriber {
  subscribe(
    spec: Readonly<{ topic: string; groupId: string }>,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void>;
  stop(): Promise<void>;
}
export const MESSAGE_SUBSCRIBER = Symbol.for('seckill.MessageSubscriber');
