import type { OrderProjectionRebuild, OrderView, ProjectionComparison } from '../../application/index.js';
import type { MemoryDatabase } from './memory-database.js';

const same = (a: OrderView, b: OrderView): boolean =>
  (Object.keys(a) as Array<keyof OrderView>).every((key) => a[key] === b[key]);

/** The `orders` projection rebuilt beside the memory profile's live table. */
export class MemoryOrderProjectionRebuild implements OrderProjectionRebuild {
  private fresh = new Map<string, OrderView>();
  private position = 0;

  constructor(private readonly db: MemoryDatabase) {}

  reset(): Promise<void> {
    this.fresh = new Map();
    this.position = 0;
    return Promise.resolve();
  }

  checkpoint(): Promise<number> {
    return Promise.resolve(this.position);
  }

  rows(orderIds: readonly string[]): Promise<Map<string, OrderView>> {
    const found = new Map<string, OrderView>();
    for (const id of orderIds) {
      const row = this.fresh.get(id);
      if (row) found.set(id, row);
    }
    return Promise.resolve(found);
  }

  commit(rows: readonly OrderView[], position: number): Promise<void> {
    for (const row of rows) this.fresh.set(row.orderId, { ...row });
    this.position = position;
    return Promise.resolve();
  }

  compare(): Promise<ProjectionComparison> {
    const live = this.db.tables.orders;
    const differing = new Set<string>();
    for (const [id, row] of live) {
      const rebuilt = this.fresh.get(id);
      if (!rebuilt || !same(row, rebuilt)) differing.add(id);
    }
    for (const id of this.fresh.keys()) if (!live.has(id)) differing.add(id);
    return Promise.resolve({
      liveRows: live.size,
      rebuiltRows: this.fresh.size,
      differing: differing.size,
      sample: [...differing].slice(0, 5),
    });
  }

  swap(): Promise<void> {
    return this.db.exclusive(() => {
      this.db.tables.orders.clear();
      for (const [id, row] of this.fresh) this.db.tables.orders.set(id, row);
      this.fresh = new Map();
    });
  }
}
