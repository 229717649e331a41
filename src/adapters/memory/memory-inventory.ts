import type { Inventory, NewProduct, ProductRecord } from '../../application/index.js';
import { type MemoryDatabase, type MemorySession, sessionOf, type TableWriter } from './memory-database.js';

export class MemoryInventory implements Inventory {
  private readonly session: MemorySession;

  constructor(source: MemoryDatabase | MemorySession) {
    this.session = sessionOf(source);
  }

  create(product: NewProduct): Promise<ProductRecord> {
    return this.session.write((tables) => {
      const record: ProductRecord = {
        ...product,
        requirePathToken: product.requirePathToken ?? false,
        productId: tables.nextProductId(),
        version: 0,
      };
      tables.set('products', record.productId, record);
      return record;
    });
  }

  get(productId: number): Promise<ProductRecord | null> {
    return Promise.resolve(this.session.get('products', productId) ?? null);
  }

  list(): Promise<ProductRecord[]> {
    return Promise.resolve(this.session.rows('products').sort((a, b) => a.productId - b.productId));
  }

  tryDecrement(productId: number, quantity: number): Promise<boolean> {
    return this.session.write((tables) => take(tables, productId, quantity));
  }

  decrementMany(productId: number, quantities: readonly number[]): Promise<boolean[]> {
    return this.session.write((tables) => {
      const total = quantities.reduce((a, b) => a + b, 0);
      if (take(tables, productId, total)) return quantities.map(() => true);
      return quantities.map((q) => take(tables, productId, q));
    });
  }

  increment(productId: number, quantity: number): Promise<void> {
    return this.session.write((tables) => {
      const row = tables.get('products', productId);
      if (row)
        tables.set('products', productId, { ...row, stock: row.stock + quantity, version: row.version + 1 });
    });
  }
}

/** UPDATE product SET stock = stock - q, version = version + 1 WHERE id = ? AND stock >= q */
const take = (tables: TableWriter, productId: number, quantity: number): boolean => {
  const row = tables.get('products', productId);
  if (!row || row.stock < quantity) return false;
  tables.set('products', productId, { ...row, stock: row.stock - quantity, version: row.version + 1 });
  return true;
};
