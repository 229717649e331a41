import type { OrderStatus, ReleaseReason } from '../../domain/index.js';

export type OrderView = Readonly<{
  orderId: string;
  userId: string;
  productId: number;
  quantity: number;
  status: OrderStatus;
  reason: ReleaseReason | null;
  reservedAt: string;
  updatedAt: string;
}>;

/** Orders and units of one product with one status (and, for released orders, one reason). */
export type StatusTally = Readonly<{
  status: OrderStatus;
  reason: ReleaseReason | null;
  orders: number;
  units: number;
}>;

/** Where a page of a buyer's orders starts: after this order, in newest-first order. */
export type OrderCursor = Readonly<{ reservedAt: string; orderId: string }>;

export type BuyerOrdersQuery = Readonly<{
  /** only this product's orders; every product's when absent */
  productId?: number | undefined;
  /** the last order of the previous page */
  after?: OrderCursor | undefined;
  limit: number;
}>;

export interface OrderReadModel {
  upsert(order: OrderView): Promise<void>;
  /** Several orders at once, each as `upsert` would. */
  upsertMany(orders: readonly OrderView[]): Promise<void>;
  get(orderId: string): Promise<OrderView | null>;
  /** Several orders in one read; unknown ones are absent. */
  getMany(orderIds: readonly string[]): Promise<Map<string, OrderView>>;
  /** Units a user holds of a product in orders with these statuses. */
  unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number>;
  /** `unitsHeld` for several users of one product at once; users holding nothing are absent. */
  unitsHeldByUsers(
    userIds: readonly string[],
    productId: number,
    statuses: readonly OrderStatus[],
  ): Promise<Map<string, number>>;
  /** Orders of one status last updated before a time, oldest first. */
  findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]>;
  /** A product's orders counted by status and reason (one query: the live dashboard asks every second). */
  tally(productId: number): Promise<StatusTally[]>;
  /** A buyer's orders, newest first (by reservation time, then order id), a page at a time. */
  listByBuyer(userId: string, query: BuyerOrdersQuery): Promise<OrderView[]>;
  /** Every order of a product with one of these statuses. */
  findByProduct(productId: number, statuses: readonly OrderStatus[]): Promise<OrderView[]>;
}
