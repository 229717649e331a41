import type { OrderReserved, ReleaseReason, ReservationReleased } from '../domain/index.js';
import { type EventEnvelope, type InboundMessage, type NewOutboxMessage, Topics } from './ports/index.js';

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

/** A message's headers: what it is, and the conversation and event it comes from. */
const headersFor = (envelope: EventEnvelope, orderId: string, messageId: string) => ({
  'event-type': envelope.event.type,
  'order-id': orderId,
  'message-id': messageId,
  'correlation-id': envelope.correlationId,
  'causation-id': envelope.eventId,
  // the consumer's work joins the buyer's trace, also when the relay sends the row again later
  ...(envelope.traceparent === undefined ? {} : { traceparent: envelope.traceparent }),
});

/** The reservation, for the commit consumer: made from the `OrderReserved` event the domain decided. */
export const reservedMessage = (envelope: EventEnvelope<OrderReserved>): NewOutboxMessage => {
  const { orderId, productId, userId, quantity, reservedAt } = envelope.event.data;
  const messageId = reservedMessageId(orderId);
  const payload: ReservedPayload = { messageId, orderId, productId, userId, quantity, reservedAt };
  return {
    messageId,
    orderId,
    topic: Topics.ORDERS_RESERVED,
    key: String(productId),
    payload: JSON.stringify(payload),
    headers: headersFor(envelope, orderId, messageId),
  };
};

/** The gate's share back, for the compensation consumer: made from the `ReservationReleased` event. */
export const compensationMessage = (envelope: EventEnvelope<ReservationReleased>): NewOutboxMessage => {
  const { orderId, productId, reason } = envelope.event.data;
  const messageId = compensationMessageId(orderId);
  const payload: CompensationPayload = { messageId, orderId, productId, reason };
  return {
    messageId,
    orderId,
    topic: Topics.STOCK_COMPENSATION,
    key: String(productId),
    payload: JSON.stringify(payload),
    headers: headersFor(envelope, orderId, messageId),
  };
};

/**
 * The messages a decision's events make, in their order: a reservation for the commit consumer, a release
 * for the compensation consumer (the gate's share back). Other events make none.
 */
export const messagesOf = (envelopes: readonly EventEnvelope[]): NewOutboxMessage[] =>
  envelopes.flatMap((envelope) => {
    const { event } = envelope;
    if (event.type === 'OrderReserved') return [reservedMessage({ ...envelope, event })];
    if (event.type === 'ReservationReleased') return [compensationMessage({ ...envelope, event })];
    return [];
  });

/** The sampled trace an inbound message carries on, if any. */
export const traceOf = (message: InboundMessage): string | undefined => {
  const traceparent = message.headers.traceparent;
  return traceparent !== undefined && TRACEPARENT.test(traceparent) ? traceparent : undefined;
};

/** A W3C traceparent (version 00), the only form kept or carried on. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

/** The conversation an inbound message belongs to (a message from before correlation ids: its own id). */
export const correlationOf = (message: InboundMessage, messageId: string): string =>
  message.headers['correlation-id'] ?? messageId;

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
