import type { ProductCommands } from '../order-stream.js';
import type {
  Clock,
  IdGenerator,
  Inventory,
  Logger,
  Metrics,
  OrderReadModel,
  SoldOutFlags,
  StockGate,
} from '../ports/index.js';
import { readStockBooks, type StockBooks, type StockReading } from '../stock-books.js';

export type ReconciliationAction = 'IN_STEP' | 'ADJUSTED' | 'REBUILT' | 'UNSETTLED';

export type ReconciliationLine = StockReading &
  Readonly<{
    drift: number;
    action: ReconciliationAction;
    gateAfter: number | null;
    /** released orders whose restore the gate had lost, given back to it by this run */
    restored: number;
  }>;

export type ReconciliationReport = Readonly<{
  startedAt: string;
  finishedAt: string;
  products: ReconciliationLine[];
}>;

/**
 * Brings the gate in line with MySQL without re-opening sold stock. The gate should equal MySQL stock less
 * what is reserved but undecided and what is released but not yet given back; copying MySQL stock into Redis
 * while reservations are in flight would sell units that MySQL must then refuse. A drift is fixed only when
 * two readings a settle interval apart agree, and only with INCRBY/DECRBY, which keeps concurrent decrements.
 *
 * A released order the gate still holds at both readings is given back to it here, by the compensation's own
 * restore (once per order, whoever comes first): its restore was lost, say by a Redis failover that dropped
 * the acknowledged write, and no message will bring it again. Left alone, the books would wait for it for ever
 * and its unit would never be offered again.
 */
export class ReconcileStock {
  constructor(
    private readonly deps: Readonly<{
      products: ProductCommands;
      inventory: Inventory;
      orders: OrderReadModel;
      gate: StockGate;
      soldOut: SoldOutFlags;
      clock: Clock;
      /** names each run's conversation */
      ids: IdGenerator;
      logger: Logger;
      metrics: Metrics;
      settleMs: number;
    }>,
  ) {}

  async run(): Promise<ReconciliationReport> {
    const startedAt = this.deps.clock.now();
    const products = await this.deps.inventory.list();
    const first = new Map<number, StockBooks>();
    for (const p of products) {
      const reading = await readStockBooks(this.deps, p.productId);
      if (reading) first.set(p.productId, reading);
    }
    await this.deps.clock.sleep(this.deps.settleMs);
    const lines: ReconciliationLine[] = [];
    for (const [productId, before] of first) {
      const after = await readStockBooks(this.deps, productId);
      if (after) lines.push(await this.settle(before, after));
    }
    return { startedAt, finishedAt: this.deps.clock.now(), products: lines };
  }

  private async settle(before: StockBooks, books: StockBooks): Promise<ReconciliationLine> {
    const { releasedHeld: _, ...after } = books;
    const drift = after.gateStock === null ? Number.NaN : after.gateStock - after.expectedGate;
    const driftBefore = before.gateStock === null ? Number.NaN : before.gateStock - before.expectedGate;
    // a restore changes the gate and the expected gate alike: the drift read before it still holds
    const restored = await this.restoreLost(before, books);
    const line = {
      ...after,
      drift: Number.isNaN(drift) ? 0 : drift,
      gateAfter: after.gateStock === null ? null : after.gateStock + restored.units,
      restored: restored.orders,
    };
    if (after.gateStock === null && before.gateStock === null) {
      if (after.expectedGate !== before.expectedGate) return { ...line, action: 'UNSETTLED' };
      const warmed = await this.deps.gate.warm(after.productId, Math.max(0, after.expectedGate));
      if (warmed === 'ALREADY_LIVE') return { ...line, action: 'UNSETTLED' };
      await this.record(after, null, Math.max(0, after.expectedGate));
      return { ...line, action: 'REBUILT', gateAfter: Math.max(0, after.expectedGate) };
    }
    this.deps.metrics.gauge('stock_drift', line.drift, { product: String(after.productId) });
    if (drift === 0) return { ...line, action: 'IN_STEP' };
    if (drift !== driftBefore) return { ...line, action: 'UNSETTLED' };
    const gateAfter = await this.deps.gate.adjust(after.productId, -drift);
    if (gateAfter === null) return { ...line, action: 'UNSETTLED' };
    await this.record(after, line.gateAfter, gateAfter);
    return { ...line, action: 'ADJUSTED', gateAfter };
  }

  /** Restores the released orders the gate held at both readings (never a gate that is missing). */
  private async restoreLost(
    before: StockBooks,
    after: StockBooks,
  ): Promise<Readonly<{ orders: number; units: number }>> {
    if (before.gateStock === null || after.gateStock === null) return { orders: 0, units: 0 };
    const seenBefore = new Set(before.releasedHeld);
    const lost = after.releasedHeld.filter((orderId) => seenBefore.has(orderId));
    if (lost.length === 0) return { orders: 0, units: 0 };
    const { productId } = after;
    const quantities = await this.deps.gate.held(productId);
    let orders = 0;
    let units = 0;
    for (const orderId of lost) {
      const quantity = quantities.get(orderId) ?? 0;
      if (!(await this.deps.gate.restore(productId, orderId))) continue;
      orders += 1;
      units += quantity;
    }
    if (orders > 0) {
      this.deps.metrics.count('reconciliation_restores', { product: String(productId) }, orders);
      this.deps.logger.warn({ productId, orders, units }, 'gate restores the gate had lost, given back');
      await this.deps.soldOut.announceStockBack(productId);
    }
    return { orders, units };
  }

  private async record(reading: StockReading, gateBefore: number | null, gateAfter: number): Promise<void> {
    const { productId } = reading;
    this.deps.metrics.count('reconciliation_fixes', { product: String(productId) });
    this.deps.logger.warn(
      { productId, gateBefore, gateAfter, expected: reading.expectedGate },
      'gate reconciled',
    );
    if (gateBefore === null || gateAfter > gateBefore) await this.deps.soldOut.announceStockBack(productId);
    const now = this.deps.clock.now();
    // a reconciliation run is its own conversation
    const correlationId = `reconcile-${this.deps.ids.next()}`;
    await this.deps.products.write(async (tx) => {
      await tx.decideOne({
        command: {
          type: 'RecordReconciliation',
          productId,
          gateBefore,
          gateAfter,
          mysqlStock: reading.mysqlStock,
          inFlight: reading.inFlight,
          now,
        },
        context: { occurredAt: now, correlationId, causationId: null },
      });
    });
  }
}
