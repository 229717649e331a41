import type { ReleaseReason } from '../domain/index.js';
import { type InboundMessage, type NewOutboxMessage, Topics } from './ports/index.js';

export type ReservedPayload = Readonly<{
  messageId: string;
  orderId: string;
  productId: number;
  userId: string;
  quantity: number;
  reservedAt: string;
}>;

export type CompensationPayload = Readonly<{
  messageId: string;
  orderId: string;
  productId: number;
  reason: ReleaseReason;
}>;

export const reservedMessageId = (orderId: string): string => `reserved-${orderId}`;
export const compensationMessageId = (orderId: string): string => `compensation-${orderId}`;

const headersFor = (eventType: string, orderId: string, messageId: string, correlationId: string) => ({
  'event-type': eventType,
  'order-id': orderId,
  'message-id': messageId,
  'correlation-id': correlationId,
});

export const reservedMessage = (
  order: Omit<ReservedPayload, 'messageId'>,
  correlationId: string,
): NewOutboxMessage => {
  const messageId = reservedMessageId(order.orderId);
  const payload: ReservedPayload = { messageId, ...order };
  return {
    messageId,
    orderId: order.orderId,
    topic: Topics.ORDERS_RESERVED,
    key: String(order.productId),
    payload: JSON.stringify(payload),
    headers: headersFor('OrderReserved', order.orderId, messageId, correlationId),
  };
};

export const compensationMessage = (
  release: Omit<CompensationPayload, 'messageId'>,
  correlationId: string,
): NewOutboxMessage => {
  const messageId = compensationMessageId(release.orderId);
  const payload: CompensationPayload = { messageId, ...release };
  return {
    messageId,
    orderId: release.orderId,
    topic: Topics.STOCK_COMPENSATION,
    key: String(release.productId),
    payload: JSON.stringify(payload),
    headers: headersFor('ReservationReleased', release.orderId, messageId, correlationId),
  };
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

const parse = (message: InboundMessage): Record<string, unknown> | null => {
  try {
    const value: unknown = JSON.parse(message.payload);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
};

export const parseReserved = (message: InboundMessage): ReservedPayload | null => {
  const p = parse(message);
  if (!p) return null;
  const { messageId, orderId, productId, userId, quantity, reservedAt } = p;
  if (typeof messageId !== 'string' || typeof orderId !== 'string' || typeof userId !== 'string') return null;
  if (typeof productId !== 'number' || typeof quantity !== 'number' || typeof reservedAt !== 'string')
    return null;
  return { messageId, orderId, productId, userId, quantity, reservedAt };
};

export const parseCompensation = (message: InboundMessage): CompensationPayload | null => {
  const p = parse(message);
  if (!p) return null;
  const { messageId, orderId, productId, reason } = p;
  if (typeof messageId !== 'string' || typeof orderId !== 'string' || typeof productId !== 'number')
    return null;
  if (typeof reason !== 'string') return null;
  return { messageId, orderId, productId, reason: reason as ReleaseReason };
};
