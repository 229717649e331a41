import type { OrderStatus, ReleaseReason } from '../../domain/index.js';
import type { BuyerOrdersQuery, OrderReadModel, OrderView, StatusTally } from '../../application/index.js';
import { OrderSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';
import { fromDateTime, marks, toDateTime } from './mysql-sql.js';

export type OrderRecord = Readonly<{
  order_id: string;
  user_id: string;
  product_id: number;
  quantity: number;
  status: string;
  reason: string | null;
  reserved_at: string | Date;
  updated_at: string | Date;
}>;

export const fromRecord = (row: OrderRecord): OrderView => ({
  orderId: row.order_id,
  userId: row.user_id,
  productId: row.product_id,
  quantity: row.quantity,
  status: row.status as OrderStatus,
  reason: row.reason as ReleaseReason | null,
  reservedAt: fromDateTime(row.reserved_at),
  updatedAt: fromDateTime(row.updated_at),
});

export const ORDER_COLUMNS =
  'order_id, user_id, product_id, quantity, status, reason, reserved_at, updated_at';

/** Replaces every column of a known order: the read model always holds the latest state. */
export const upsertInto = (table: string): string => `INSERT INTO ${table} (${ORDER_COLUMNS}) VALUES ?
  ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), product_id = VALUES(product_id), quantity = VALUES(quantity),
  status = VALUES(status), reason = VALUES(reason), reserved_at = VALUES(reserved_at), updated_at = VALUES(updated_at)`;
const UPSERT = upsertInto('orders');

export const toValues = (order: OrderView) => [
  order.orderId,
  order.userId,
  order.productId,
  order.quantity,
  order.status,
  order.reason,
  toDateTime(order.reservedAt),
  toDateTime(order.updatedAt),
];

/**
 * The `orders` table: the read model kept in step with the order streams, in the same transaction. The
 * writes and the per-user sums the commit consumer runs are plain SQL, one statement per batch.
 */
export class MySqlOrderReadModel implements OrderReadModel {
  constructor(private readonly session: MySqlSession) {}

  upsert(order: OrderView): Promise<void> {
    return this.upsertMany([order]);
  }

  upsertMany(orders: readonly OrderView[]): Promise<void> {
    if (orders.length === 0) return Promise.resolve();
    return this.session.run('upsert orders', async ({ sql }) => {
      await sql.query(UPSERT, [orders.map(toValues)]);
    });
  }

  get(orderId: string): Promise<OrderView | null> {
    return this.session.run('read order', async ({ sql }) => {
      const [row] = await sql.execute<OrderRecord[]>(
        `SELECT ${ORDER_COLUMNS} FROM orders WHERE order_id = ?`,
        [orderId],
      );
      return row ? fromRecord(row) : null;
    });
  }

  getMany(orderIds: readonly string[]): Promise<Map<string, OrderView>> {
    if (orderIds.length === 0) return Promise.resolve(new Map<string, OrderView>());
    return this.session.run('read orders', async ({ sql }) => {
      const rows = await sql.query<OrderRecord[]>(
        `SELECT ${ORDER_COLUMNS} FROM orders WHERE order_id IN (${marks(orderIds.length)})`,
        [...orderIds],
      );
      return new Map<string, OrderView>(rows.map((row) => [row.order_id, fromRecord(row)]));
    });
  }

  unitsHeld(userId: string, productId: number, statuses: readonly OrderStatus[]): Promise<number> {
    return this.session.run('units held', async ({ em }) => {
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
    return this.session.run('units held by users', async ({ sql }) => {
      const users = [...new Set(userIds)];
      const rows = await sql.query<Array<{ user_id: string; units: number | string }>>(
        `SELECT user_id, SUM(quantity) AS units FROM orders WHERE product_id = ? AND user_id IN (${marks(users.length)}) AND status IN (${marks(statuses.length)}) GROUP BY user_id`,
        [productId, ...users, ...statuses],
      );
      return new Map<string, number>(rows.map((row) => [row.user_id, Number(row.units)]));
    });
  }

  findByStatus(status: OrderStatus, updatedBefore: string, limit: number): Promise<OrderView[]> {
    return this.session.run('orders by status', async ({ sql }) =>
      (
        await sql.query<OrderRecord[]>(
          `SELECT ${ORDER_COLUMNS} FROM orders WHERE status = ? AND updated_at < ? ORDER BY updated_at LIMIT ?`,
          [status, toDateTime(updatedBefore), limit],
        )
      ).map(fromRecord),
    );
  }

  /** On the (user_id, product_id) index: a buyer's orders are few, so the sort is of a handful of rows. */
  listByBuyer(userId: string, query: BuyerOrdersQuery): Promise<OrderView[]> {
    const { productId, after, limit } = query;
    const where = ['user_id = ?'];
    const params: unknown[] = [userId];
    if (productId !== undefined) {
      where.push('product_id = ?');
      params.push(productId);
    }
    if (after) {
      const at = toDateTime(after.reservedAt);
      where.push('(reserved_at < ? OR (reserved_at = ? AND order_id < ?))');
      params.push(at, at, after.orderId);
    }
    return this.session.run('orders of a buyer', async ({ sql }) =>
      (
        await sql.query<OrderRecord[]>(
          `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY reserved_at DESC, order_id DESC LIMIT ?`,
          [...params, limit],
        )
      ).map(fromRecord),
    );
  }

  tally(productId: number): Promise<StatusTally[]> {
    return this.session.run('tally orders', async ({ sql }) => {
      const rows = await sql.query<
        Array<{ status: string; reason: string | null; orders: number | string; units: number | string }>
      >(
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
    if (statuses.length === 0) return Promise.resolve([]);
    return this.session.run('orders by product', async ({ sql }) =>
      (
        await sql.query<OrderRecord[]>(
          `SELECT ${ORDER_COLUMNS} FROM orders WHERE product_id = ? AND status IN (${marks(statuses.length)})`,
          [productId, ...statuses],
        )
      ).map(fromRecord),
    );
  }
}
