import type { OrderStatus } from '../../domain/index.js';
import type { OrderReadModel, OrderView } from '../../application/index.js';
import { journaledSet, type Journal, type MemoryDatabase } from './memory-database.js';

export class MemoryOrderReadModel implements OrderReadModel {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly journal: Journal = null,
  ) {}

  upsert(order: OrderView): Promise<void> {
    journaledSet(this.journal, this.db.orders, order.orderId, { ...order });
    return Promise.resolve();
  }

  get(orderId: string): Promise<OrderView | null> {
    return Promise.resolve(this.db.orders.get(orderId) ?? null);
  }

  unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number> {
    let units = 0;
    for (const o of this.db.orders.values())
      if (o.userId === userId && o.productId === productId && statuses.includes(o.status))
        units += o.quantity;
    return Promise.resolve(units);
  }

  findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]> {
    const found = [...this.db.orders.values()]
      .filter((o) => o.status === status && o.updatedAt < updatedBefore)
      .sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
    return Promise.resolve(found.slice(0, limit));
  }

  findByProduct(productId: number, statuses: readonly OrderStatus[]): Promise<OrderView[]> {
    return Promise.resolve(
      [...this.db.orders.values()].filter((o) => o.productId === productId && statuses.includes(o.status)),
    );
  }
}
