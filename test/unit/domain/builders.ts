import type {
  OrderPaid,
  OrderReserved,
  ProductListed,
  ReleaseReason,
  ReservationReleased,
  StockAdded,
  StockCommitted,
  StockReconciled,
} from '../../../src/domain/index.js';

/** Fixed instants: domain code must take time from the command, so tests never read the clock. */
export const reservedAt = '2030-05-01T10:00:00.000Z';
export const committedAt = '2030-05-01T10:00:01.000Z';
export const paidAt = '2030-05-01T10:05:00.000Z';
export const releasedAt = '2030-05-01T10:30:00.000Z';
export const listedAt = '2030-04-30T09:00:00.000Z';

export const orderId = 'order-1';
export const productId = 7;
export const userId = 'user-1';

export const orderReserved = (data: Partial<OrderReserved['data']> = {}): OrderReserved => ({
  type: 'OrderReserved',
  data: { orderId, productId, userId, quantity: 2, reservedAt, ...data },
});

export const stockCommitted = (data: Partial<StockCommitted['data']> = {}): StockCommitted => ({
  type: 'StockCommitted',
  data: { orderId, productId, quantity: 2, committedAt, ...data },
});

export const reservationReleased = (
  reason: ReleaseReason,
  stockWasCommitted: boolean,
  data: Partial<ReservationReleased['data']> = {},
): ReservationReleased => ({
  type: 'ReservationReleased',
  data: { orderId, productId, userId, quantity: 2, reason, stockWasCommitted, releasedAt, ...data },
});

export const orderPaid = (data: Partial<OrderPaid['data']> = {}): OrderPaid => ({
  type: 'OrderPaid',
  data: { orderId, paidAt, ...data },
});

export const productListed = (data: Partial<ProductListed['data']> = {}): ProductListed => ({
  type: 'ProductListed',
  data: {
    productId,
    name: 'Mechanical keyboard',
    stock: 10,
    perUserLimit: 2,
    maxPerOrder: 2,
    saleStartsAt: '2030-05-01T09:00:00.000Z',
    saleEndsAt: '2030-05-01T12:00:00.000Z',
    requirePathToken: false,
    listedAt,
    ...data,
  },
});

export const stockAdded = (data: Partial<StockAdded['data']> = {}): StockAdded => ({
  type: 'StockAdded',
  data: { productId, quantity: 5, addedAt: listedAt, ...data },
});

export const stockReconciled = (data: Partial<StockReconciled['data']> = {}): StockReconciled => ({
  type: 'StockReconciled',
  data: {
    productId,
    gateBefore: 3,
    gateAfter: 4,
    mysqlStock: 6,
    inFlight: 2,
    reconciledAt: listedAt,
    ...data,
  },
});
