import type { OrderStatus } from '../../domain/index.js';
import type { BuyerOrdersQuery, OrderReadModel, OrderView, StatusTally } from '../../application/index.js';
import { type MemoryDatabase, type MemorySession, sessionOf } from './memory-database.js';

export class MemoryOrderReadModel implements OrderReadModel {
  private readonly session: MemorySession;

  constructor(source: MemoryDatabase | MemorySession) {
    this.session = sessionOf(source);
  }

  upsert(order: OrderView): Promise<void> {
    return this.session.write((tables) => tables.set('orders', order.orderId, { ...order }));
  }

  upsertMany(orders: readonly OrderView[]): Promise<void> {
    return this.session.write((tables) => {
      for (const order of orders) tables.set('orders', order.orderId, { ...order });
    });
  }

  get(orderId: string): Promise<OrderView | null> {
    return Promise.resolve(this.session.get('orders', orderId) ?? null);
  }

  getMany(orderIds: readonly string[]): Promise<Map<string, OrderView>> {
    const found = new Map<string, OrderView>();
    for (const orderId of orderIds) {
      const view = this.session.get('orders', orderId);
      if (view) found.set(orderId, view);
    }
    return Promise.resolve(found);
  }

  unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number> {
    let units = 0;
    for (const o of this.session.rows('orders'))
      if (o.userId === userId && o.productId === productId && statuses.includes(o.status))
        units += o.quantity;
    return Promise.resolve(units);
  }

  unitsHeldByUsers(
    userIds: readonly string[],
    productId: number,
    statuses: readonly OrderStatus[],
  ): Promise<Map<string, number>> {
    const users = new Set(userIds);
    const held = new Map<string, number>();
    for (const o of this.session.rows('orders'))
      if (users.has(o.userId) && o.productId === productId && statuses.includes(o.status))
        held.set(o.userId, (held.get(o.userId) ?? 0) + o.quantity);
    return Promise.resolve(held);
  }

  findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]> {
    const found = this.session
      .rows('orders')
      .filter((o) => o.status === status && o.updatedAt < updatedBefore)
      .sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
    return Promise.resolve(found.slice(0, limit));
  }

  listByBuyer(userId: string, query: BuyerOrdersQuery): Promise<OrderView[]> {
    const { productId, after, limit } = query;
    const newestFirst = (a: OrderView, b: OrderView) =>
      b.reservedAt.localeCompare(a.reservedAt) || b.orderId.localeCompare(a.orderId);
    const found = this.session
      .rows('orders')
      .filter((o) => o.userId === userId && (productId === undefined || o.productId === productId))
      .filter(
        (o) =>
          !after ||
          o.reservedAt < after.reservedAt ||
          (o.reservedAt === after.reservedAt && o.orderId < after.orderId),
      )
      .sort(newestFirst);
    return Promise.resolve(found.slice(0, limit).map((o) => ({ ...o })));
  }

  tally(productId: number): Promise<StatusTally[]> {
    const tallies = new Map<
      string,
      { status: OrderStatus; reason: OrderView['reason']; orders: number; units: number }
    >();
    for (const o of this.session.rows('orders')) {
      if (o.productId !== productId) continue;
      const key = `${o.status}/${o.reason ?? ''}`;
      const tally = tallies.get(key) ?? { status: o.status, reason: o.reason, orders: 0, units: 0 };
      tally.orders += 1;
      tally.units += o.quantity;
      tallies.set(key, tally);
    }
    return Promise.resolve([...tallies.values()]);
  }

  findByProduct(productId: number, statuses: readonly OrderStatus[]): Promise<OrderView[]> {
    return Promise.resolve(
      this.session.rows('orders').filter((o) => o.productId === productId && statuses.includes(o.status)),
    );
  }
}
