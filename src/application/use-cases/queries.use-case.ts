import { assertVisibleTo, ProductNotListed } from '../../domain/index.js';
import type { Inventory, OrderCursor, OrderReadModel, OrderView, StockGate } from '../ports/index.js';

export type ProductView = Readonly<{
  productId: number;
  name: string;
  stockLeft: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
  perUserLimit: number;
  maxPerOrder: number;
  /** orders must carry a sale path token (POST /api/v1/seckill/products/{id}/path) */
  requirePathToken: boolean;
}>;

export class Queries {
  constructor(
    private readonly inventory: Inventory,
    private readonly orders: OrderReadModel,
    private readonly gate: StockGate,
  ) {}

  /** Only the owner sees an order; to anybody else it does not exist. */
  async order(userId: string, orderId: string): Promise<OrderView> {
    const order = await this.orders.get(orderId);
    assertVisibleTo(order, userId, orderId);
    return order!;
  }

  /**
   * A buyer's own orders, newest first, a page at a time: how a buyer finds an order whose answer never
   * arrived. `next` is where the following page starts; null on the last page.
   */
  async myOrders(
    userId: string,
    query: Readonly<{ productId?: number | undefined; after?: OrderCursor | undefined; limit: number }>,
  ): Promise<Readonly<{ orders: OrderView[]; next: OrderCursor | null }>> {
    // one more than asked tells whether a next page exists
    const found = await this.orders.listByBuyer(userId, { ...query, limit: query.limit + 1 });
    const orders = found.slice(0, query.limit);
    const last = orders[orders.length - 1];
    const next =
      found.length > query.limit && last ? { reservedAt: last.reservedAt, orderId: last.orderId } : null;
    return { orders, next };
  }

  /** Stock left as buyers meet it: the gate's view, or MySQL's while the gate is not loaded. */
  async product(productId: number): Promise<ProductView> {
    const record = await this.inventory.get(productId);
    if (!record) throw new ProductNotListed(productId);
    const gateStock = await this.gate.stockLeft(productId);
    const { name, saleStartsAt, saleEndsAt, perUserLimit, maxPerOrder, requirePathToken } = record;
    return {
      productId,
      name,
      stockLeft: Math.max(0, gateStock ?? record.stock),
      saleStartsAt,
      saleEndsAt,
      perUserLimit,
      maxPerOrder,
      requirePathToken,
    };
  }
}
