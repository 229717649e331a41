/** Events are plain readonly data; the store wraps each in an envelope (id, schema version, correlation, causation). */
export type Event<T extends string, D> = Readonly<{ type: T; data: Readonly<D> }>;

export type ReleaseReason =
  'SOLD_OUT' | 'LIMIT_EXCEEDED' | 'PAYMENT_TIMEOUT' | 'CANCELLED' | 'RESERVATION_FAILED';
export const RELEASE_REASONS: readonly ReleaseReason[] = [
  'SOLD_OUT',
  'LIMIT_EXCEEDED',
  'PAYMENT_TIMEOUT',
  'CANCELLED',
  'RESERVATION_FAILED',
];

export type OrderReserved = Event<
  'OrderReserved',
  { orderId: string; productId: number; userId: string; quantity: number; reservedAt: string }
>;
export type StockCommitted = Event<
  'StockCommitted',
  { orderId: string; productId: number; quantity: number; committedAt: string }
>;
export type ReservationReleased = Event<
  'ReservationReleased',
  {
    orderId: string;
    productId: number;
    userId: string;
    quantity: number;
    reason: ReleaseReason;
    stockWasCommitted: boolean;
    releasedAt: string;
  }
>;
export type OrderPaid = Event<'OrderPaid', { orderId: string; paidAt: string }>;

export type OrderEvent = OrderReserved | StockCommitted | ReservationReleased | OrderPaid;

export type ProductListed = Event<
  'ProductListed',
  {
    productId: number;
    name: string;
    stock: number;
    perUserLimit: number;
    maxPerOrder: number;
    saleStartsAt: string | null;
    saleEndsAt: string | null;
    /** v2: orders must carry a sale path token (v1 events are read as false) */
    requirePathToken: boolean;
    listedAt: string;
  }
>;
export type StockAdded = Event<'StockAdded', { productId: number; quantity: number; addedAt: string }>;
export type StockReconciled = Event<
  'StockReconciled',
  {
    productId: number;
    gateBefore: number | null;
    gateAfter: number;
    mysqlStock: number;
    inFlight: number;
    reconciledAt: string;
  }
>;

export type ProductEvent = ProductListed | StockAdded | StockReconciled;

export type DomainEvent = OrderEvent | ProductEvent;
export type DomainEventType = DomainEvent['type'];

/**
 * The schema version each event type is written with today. Change an event's data, and its version goes up
 * by one here, with an upcaster (application/event-schema.ts) that reads the old shape as the new.
 */
export const EVENT_SCHEMA_VERSIONS: Readonly<Record<DomainEventType, number>> = {
  OrderReserved: 1,
  StockCommitted: 1,
  ReservationReleased: 1,
  OrderPaid: 1,
  ProductListed: 2,
  StockAdded: 1,
  StockReconciled: 1,
};

export const orderStreamId = (orderId: string): string => `order-${orderId}`;
export const productStreamId = (productId: number): string => `product-${productId}`;

export const isOrderEvent = (event: DomainEvent): event is OrderEvent =>
  event.type === 'OrderReserved' ||
  event.type === 'StockCommitted' ||
  event.type === 'ReservationReleased' ||
  event.type === 'OrderPaid';

export const assertNever = (value: never): never => {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
};

export const isProductEvent = (event: DomainEvent): event is ProductEvent => !isOrderEvent(event);
