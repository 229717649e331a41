import type { OrderStatus, ReleaseReason } from '../../domain/index.js';
import type { OrderReadModel, OrderView, StatusTally } from '../../application/index.js';
import { type OrderRow, OrderSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';

const toView = (row: OrderRow): OrderView => ({
  orderId: row.orderId,
  userId: row.userId,
  productId: row.productId,
  quantity: row.quantity,
  status: row.status as OrderStatus,
  reason: row.reason as ReleaseReason | null,
  reservedAt: row.reservedAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const toRow = (order: OrderView) => ({
  orderId: order.orderId,
  userId: order.userId,
  productId: order.productId,
  quantity: order.quantity,
  status: order.status,
  reason: order.reason,
  reservedAt: new Date(order.reservedAt),
  updatedAt: new Date(order.updatedAt),
});

/** The `orders` table: the read model kept in step with the order streams, in the same transaction. */
export class MySqlOrderReadModel implements OrderReadModel {
  constructor(private readonly session: MySqlSession) {}

  upsert(order: OrderView): Promise<void> {
    return this.upsertMany([order]);
  }

  upsertMany(orders: readonly OrderView[]): Promise<void> {
    if (orders.length === 0) return Promise.resolve();
    return this.session.run('upsert orders', async (em) => {
      await em.upsertMany(OrderSchema, orders.map(toRow), { disableIdentityMap: true });
    });
  }

  get(orderId: string): Promise<OrderView | null> {
    return this.session.run('read order', async (em) => {
      const row = await em.findOne(OrderSchema, { orderId }, { disableIdentityMap: true });
      return row ? toView(row) : null;
    });
  }

  unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number> {
    return this.session.run('units held', async (em) => {
      const rows = await em.find(
        OrderSchema,
        { userId, productId, status: { $in: [...statuses] } },
        { fields: ['quantity'], disableIdentityMap: true },
      );
      return rows.reduce((sum, row) => sum + row.quantity, 0);
    });
  }

  unitsHeldByUsers(
    userIds: readonly string[],
    productId: number,
    statuses: readonly OrderStatus[],
  ): Promise<Map<string, number>> {
    if (userIds.length === 0 || statuses.length === 0) return Promise.resolve(new Map<string, number>());
    return this.session.run('units held by users', async (em) => {
      const users = [...new Set(userIds)];
      const rows: Array<{ user_id: string; units: number | string }> = await em
        .getConnection()
        .execute(
          `SELECT user_id, SUM(quantity) AS units FROM orders WHERE product_id = ? AND user_id IN (${users.map(() => '?').join(', ')}) AND status IN (${statuses.map(() => '?').join(', ')}) GROUP BY user_id`,
          [productId, ...users, ...statuses],
        );
      return new Map<string, number>(rows.map((row) => [row.user_id, Number(row.units)]));
    });
  }

  findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]> {
    return this.session.run('orders by status', async (em) =>
      (
        await em.find(
          OrderSchema,
          { status, updatedAt: { $lt: new Date(updatedBefore) } },
          { orderBy: { updatedAt: 'asc' }, limit, disableIdentityMap: true },
        )
      ).map(toView),
    );
  }

  tally(productId: number): Promise<StatusTally[]> {
    return this.session.run('tally orders', async (em) => {
      const rows: Array<{
        status: string;
        reason: string | null;
        orders: number | string;
        units: number | string;
      }> = await em
        .getConnection()
        .execute(
          'SELECT status, reason, COUNT(*) AS orders, SUM(quantity) AS units FROM orders WHERE product_id = ? GROUP BY status, reason',
          [productId],
        );
      return rows.map((row) => ({
        status: row.status as OrderStatus,
        reason: row.reason as ReleaseReason | null,
        orders: Number(row.orders),
        units: Number(row.units),
      }));
    });
  }

  findByProduct(productId: number, statuses: readonly OrderStatus[]): Promise<OrderView[]> {
    return this.session.run('orders by product', async (em) =>
      (
        await em.find(
          OrderSchema,
          { productId, status: { $in: [...statuses] } },
          { disableIdentityMap: true },
        )
      ).map(toView),
    );
  }
}
