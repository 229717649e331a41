import type { Inventory, NewProduct, ProductRecord } from '../../application/index.js';
import { journaledSet, type Journal, type MemoryDatabase } from './memory-database.js';

export class MemoryInventory implements Inventory {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly journal: Journal = null,
  ) {}

  create(product: NewProduct): Promise<ProductRecord> {
    const productId = this.db.nextProductId++;
    this.journal?.undo.push(() => (this.db.nextProductId = productId));
    const record: ProductRecord = { ...product, productId, version: 0 };
    journaledSet(this.journal, this.db.products, productId, record);
    return Promise.resolve(record);
  }

  get(productId: number): Promise<ProductRecord | null> {
    return Promise.resolve(this.db.products.get(productId) ?? null);
  }

  list(): Promise<ProductRecord[]> {
    return Promise.resolve([...this.db.products.values()].sort((a, b) => a.productId - b.productId));
  }

  tryDecrement(productId: number, quantity: number): Promise<boolean> {
    return Promise.resolve(this.take(productId, quantity));
  }

  decrementMany(productId: number, quantities: readonly number[]): Promise<boolean[]> {
    const total = quantities.reduce((a, b) => a + b, 0);
    if (this.take(productId, total)) return Promise.resolve(quantities.map(() => true));
    return Promise.resolve(quantities.map((q) => this.take(productId, q)));
  }

  increment(productId: number, quantity: number): Promise<void> {
    const row = this.db.products.get(productId);
    if (row)
      journaledSet(this.journal, this.db.products, productId, {
        ...row,
        stock: row.stock + quantity,
        version: row.version + 1,
      });
    return Promise.resolve();
  }

  /** UPDATE product SET stock = stock - q, version = version + 1 WHERE id = ? AND stock >= q */
  private take(productId: number, quantity: number): boolean {
    const row = this.db.products.get(productId);
    if (!row || row.stock < quantity) return false;
    journaledSet(this.journal, this.db.products, productId, {
      ...row,
      stock: row.stock - quantity,
      version: row.version + 1,
    });
    return true;
  }
}
