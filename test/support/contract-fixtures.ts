import { type DomainEvent, EVENT_SCHEMA_VERSIONS, type OrderStatus } from '../../src/domain/index.js';
import type {
  EventEnvelope,
  NewOutboxMessage,
  NewProduct,
  OrderView,
  Stream,
} from '../../src/application/index.js';
import { instant } from './contract-helpers.js';

export const orderReserved = (orderId: string, quantity = 1): DomainEvent => ({
  type: 'OrderReserved',
  data: { orderId, productId: 7, userId: 'user-1', quantity, reservedAt: instant(0) },
});

export const stockCommitted = (orderId: string): DomainEvent => ({
  type: 'StockCommitted',
  data: { orderId, productId: 7, quantity: 1, committedAt: instant(1) },
});

/** One event of every shape the store must keep: nested data, booleans, nulls, unicode. */
export const everyKindOfEvent = (orderId: string): DomainEvent[] => [
  orderReserved(orderId, 2),
  stockCommitted(orderId),
  {
    type: 'ReservationReleased',
    data: {
      orderId,
      productId: 7,
      userId: 'user-1',
      quantity: 2,
      reason: 'PAYMENT_TIMEOUT',
      stockWasCommitted: true,
      releasedAt: instant(900),
    },
  },
  { type: 'OrderPaid', data: { orderId, paidAt: instant(5) } },
  {
    type: 'ProductListed',
    data: {
      productId: 7,
      name: 'Ünïcödé 限定 "quoted" \\ name',
      stock: 1_000_000,
      perUserLimit: 2,
      maxPerOrder: 1,
      requirePathToken: true,
      saleStartsAt: null,
      saleEndsAt: instant(3_600),
      listedAt: instant(-60),
    },
  },
  { type: 'StockAdded', data: { productId: 7, quantity: 5, addedAt: instant(10) } },
  {
    type: 'StockReconciled',
    data: {
      productId: 7,
      gateBefore: null,
      gateAfter: 0,
      mysqlStock: 3,
      inFlight: -3,
      reconciledAt: instant(20),
    },
  },
];

export const newProduct = (overrides: Partial<NewProduct> = {}): NewProduct => ({
  name: 'flash widget',
  stock: 10,
  perUserLimit: 2,
  maxPerOrder: 2,
  saleStartsAt: null,
  saleEndsAt: null,
  ...overrides,
});

export const orderView = (
  orderId: string,
  overrides: Partial<Omit<OrderView, 'orderId'>> & { status?: OrderStatus } = {},
): OrderView => ({
  orderId,
  userId: 'user-1',
  productId: 7,
  quantity: 1,
  status: 'RESERVED',
  reason: null,
  reservedAt: instant(0),
  updatedAt: instant(0),
  ...overrides,
});

export const outboxMessage = (
  messageId: string,
  overrides: Partial<NewOutboxMessage> = {},
): NewOutboxMessage => ({
  messageId,
  orderId: `order-of-${messageId}`,
  topic: 'seckill.orders.reserved',
  key: '7',
  payload: JSON.stringify({ messageId, note: 'payload with "quotes" and ünïcödé' }),
  headers: { 'correlation-id': `corr-${messageId}`, 'content-type': 'application/json' },
  ...overrides,
});

let envelopes = 0;

/** Events in envelopes as a command handler would make them; `context` overrides the defaults. */
export const wrap = (
  events: readonly DomainEvent[],
  context: Partial<Omit<EventEnvelope, 'event'>> = {},
): EventEnvelope[] =>
  events.map((event) => {
    envelopes += 1;
    return {
      eventId: `00000000-0000-4000-8000-${String(envelopes).padStart(12, '0')}`,
      schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
      occurredAt: instant(envelopes % 1000),
      correlationId: 'corr-test',
      causationId: null,
      event,
      ...context,
    };
  });

/** A stream read back as bare events and its version. */
export const plain = (stream: Stream | undefined) =>
  stream && { events: stream.events.map((e) => e.event), version: stream.version };
