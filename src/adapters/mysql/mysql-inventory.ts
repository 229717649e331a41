import { raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/mysql';
import type { Inventory, NewProduct, ProductRecord } from '../../application/index.js';
import { type ProductRow, ProductSchema } from './mysql-schema.js';
import type { MySqlSession } from './mysql-session.js';

const toRecord = (row: ProductRow): ProductRecord => ({
  productId: row.id,
  name: row.name,
  stock: row.stock,
  version: row.version,
  perUserLimit: row.perUserLimit,
  maxPerOrder: row.maxPerOrder,
  saleStartsAt: row.saleStartsAt?.toISOString() ?? null,
  saleEndsAt: row.saleEndsAt?.toISOString() ?? null,
});

/** UPDATE product SET stock = stock - ?, version = version + 1 WHERE id = ? AND stock >= ? — 1 row or none. */
const take = async (em: EntityManager, productId: number, quantity: number): Promise<boolean> =>
  (await em.nativeUpdate(
    ProductSchema,
    { id: productId, stock: { $gte: quantity } },
    { stock: raw('stock - ?', [quantity]), version: raw('version + 1') },
  )) === 1;

/** The `product` table: MySQL's final word on stock. */
export class MySqlInventory implements Inventory {
  constructor(private readonly session: MySqlSession) {}

  create(product: NewProduct): Promise<ProductRecord> {
    return this.session.run('create product', async (em) => {
      const row = {
        name: product.name,
        stock: product.stock,
        version: 0,
        perUserLimit: product.perUserLimit,
        maxPerOrder: product.maxPerOrder,
        saleStartsAt: product.saleStartsAt === null ? null : new Date(product.saleStartsAt),
        saleEndsAt: product.saleEndsAt === null ? null : new Date(product.saleEndsAt),
      };
      const id = await em.insert<ProductRow>(ProductSchema, row);
      return toRecord({ ...row, id: Number(id) });
    });
  }

  get(productId: number): Promise<ProductRecord | null> {
    return this.session.run('read product', async (em) => {
      const row = await em.findOne(ProductSchema, { id: productId }, { disableIdentityMap: true });
      return row ? toRecord(row) : null;
    });
  }

  list(): Promise<ProductRecord[]> {
    return this.session.run('list products', async (em) =>
      (await em.find(ProductSchema, {}, { orderBy: { id: 'asc' }, disableIdentityMap: true })).map(toRecord),
    );
  }

  tryDecrement(productId: number, quantity: number): Promise<boolean> {
    return this.session.run('decrement stock', (em) => take(em, productId, quantity));
  }

  /**
   * The hot row is MySQL's bottleneck: one conditional UPDATE for the whole batch when the sum fits, else
   * one UPDATE per order, in order, so the earliest orders get the last units.
   */
  decrementMany(productId: number, quantities: readonly number[]): Promise<boolean[]> {
    return this.session.run('decrement stock (merged)', async (em) => {
      const total = quantities.reduce((a, b) => a + b, 0);
      if (quantities.length > 1 && (await take(em, productId, total))) return quantities.map(() => true);
      const taken: boolean[] = [];
      for (const quantity of quantities) taken.push(await take(em, productId, quantity));
      return taken;
    });
  }

  increment(productId: number, quantity: number): Promise<void> {
    return this.session.run('return stock', async (em) => {
      await em.nativeUpdate(
        ProductSchema,
        { id: productId },
        { stock: raw('stock + ?', [quantity]), version: raw('version + 1') },
      );
    });
  }
}
