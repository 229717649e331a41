import type { Inventory, NewProduct, ProductRecord } from '../../application/index.js';
import { type ProductRow, ProductSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';
import { fromDateTime, type SqlStatements, type WriteResult } from './mysql-sql.js';

type ProductRecordRow = Readonly<{
  id: number;
  name: string;
  stock: number;
  version: number;
  per_user_limit: number;
  max_per_order: number;
  sale_starts_at: string | Date | null;
  sale_ends_at: string | Date | null;
  require_path_token: number | boolean;
}>;

const fromRow = (row: ProductRecordRow): ProductRecord => ({
  productId: row.id,
  name: row.name,
  stock: row.stock,
  version: row.version,
  perUserLimit: row.per_user_limit,
  maxPerOrder: row.max_per_order,
  saleStartsAt: row.sale_starts_at === null ? null : fromDateTime(row.sale_starts_at),
  saleEndsAt: row.sale_ends_at === null ? null : fromDateTime(row.sale_ends_at),
  requirePathToken: Boolean(row.require_path_token),
});

const toRecord = (row: ProductRow): ProductRecord => ({
  productId: row.id,
  name: row.name,
  stock: row.stock,
  version: row.version,
  perUserLimit: row.perUserLimit,
  maxPerOrder: row.maxPerOrder,
  saleStartsAt: row.saleStartsAt?.toISOString() ?? null,
  saleEndsAt: row.saleEndsAt?.toISOString() ?? null,
  requirePathToken: Boolean(row.requirePathToken),
});

/** The optimistic-lock decrement, a prepared statement: 1 row or none. */
const take = async (sql: SqlStatements, productId: number, quantity: number): Promise<boolean> =>
  (
    await sql.execute<WriteResult>(
      'UPDATE product SET stock = stock - ?, version = version + 1 WHERE id = ? AND stock >= ?',
      [quantity, productId, quantity],
    )
  ).affectedRows === 1;

/** The `product` table: MySQL's final word on stock. Reads and stock changes are plain prepared SQL. */
export class MySqlInventory implements Inventory {
  constructor(private readonly session: MySqlSession) {}

  create(product: NewProduct): Promise<ProductRecord> {
    return this.session.run('create product', async ({ em }) => {
      const row = {
        name: product.name,
        stock: product.stock,
        version: 0,
        perUserLimit: product.perUserLimit,
        maxPerOrder: product.maxPerOrder,
        saleStartsAt: product.saleStartsAt === null ? null : new Date(product.saleStartsAt),
        saleEndsAt: product.saleEndsAt === null ? null : new Date(product.saleEndsAt),
        requirePathToken: product.requirePathToken ?? false,
      };
      const id = await em.insert<ProductRow>(ProductSchema, row);
      return toRecord({ ...row, id: Number(id) });
    });
  }

  get(productId: number): Promise<ProductRecord | null> {
    return this.session.run('read product', async ({ sql }) => {
      const [row] = await sql.execute<ProductRecordRow[]>(
        'SELECT id, name, stock, version, per_user_limit, max_per_order, sale_starts_at, sale_ends_at, require_path_token FROM product WHERE id = ?',
        [productId],
      );
      return row ? fromRow(row) : null;
    });
  }

  list(): Promise<ProductRecord[]> {
    return this.session.run('list products', async ({ em }) =>
      (await em.find(ProductSchema, {}, { orderBy: { id: 'asc' }, disableIdentityMap: true })).map(toRecord),
    );
  }

  tryDecrement(productId: number, quantity: number): Promise<boolean> {
    return this.session.run('decrement stock', ({ sql }) => take(sql, productId, quantity));
  }

  /**
   * The hot row is MySQL's bottleneck: one conditional UPDATE for the whole batch when the sum fits, else
   * one UPDATE per order, in order, so the earliest orders get the last units.
   */
  decrementMany(productId: number, quantities: readonly number[]): Promise<boolean[]> {
    return this.session.run('decrement stock (merged)', async ({ sql }) => {
      const total = quantities.reduce((a, b) => a + b, 0);
      if (quantities.length > 1 && (await take(sql, productId, total))) return quantities.map(() => true);
      const taken: boolean[] = [];
      for (const quantity of quantities) taken.push(await take(sql, productId, quantity));
      return taken;
    });
  }

  increment(productId: number, quantity: number): Promise<void> {
    return this.session.run('return stock', async ({ sql }) => {
      await sql.execute('UPDATE product SET stock = stock + ?, version = version + 1 WHERE id = ?', [
        quantity,
        productId,
      ]);
    });
  }
}
