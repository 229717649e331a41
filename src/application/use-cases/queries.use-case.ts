import { assertVisibleTo, ProductNotListed } from '../../domain/index.js';
import type { Inventory, OrderReadModel, OrderView, StockGate } from '../ports/index.js';

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
