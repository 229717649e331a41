import { retryOnConflict } from '../command-handler.js';
import { type ProductCommands, productCommands } from '../order-stream.js';
import type {
  Clock,
  IdGenerator,
  Inventory,
  Logger,
  Metrics,
  OrderReadModel,
  SoldOutFlags,
  StockGate,
  UnitOfWork,
} from '../ports/index.js';
import { readStockBooks, type StockReading } from './stock-books.js';

export type ReconciliationAction = 'IN_STEP' | 'ADJUSTED' | 'REBUILT' | 'UNSETTLED';

export type ReconciliationLine = StockReading &
  Readonly<{ drift: number; action: ReconciliationAction; gateAfter: number | null }>;

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
 */
export class ReconcileStock {
  constructor(
    private readonly deps: Readonly<{
      unitOfWork: UnitOfWork;
      inventory: Inventory;
      orders: OrderReadModel;
      gate: StockGate;
      soldOut: SoldOutFlags;
      clock: Clock;
      ids: IdGenerator;
      logger: Logger;
      metrics: Metrics;
      settleMs: number;
    }>,
  ) {
    this.products = productCommands(deps.ids);
  }

  private readonly products: ProductCommands;

  async run(): Promise<ReconciliationReport> {
    const startedAt = this.deps.clock.now();
    const products = await this.deps.inventory.list();
    const first = new Map<number, StockReading>();
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

  private async settle(before: StockReading, after: StockReading): Promise<ReconciliationLine> {
    const drift = after.gateStock === null ? Number.NaN : after.gateStock - after.expectedGate;
    const driftBefore = before.gateStock === null ? Number.NaN : before.gateStock - before.expectedGate;
    const line = { ...after, drift: Number.isNaN(drift) ? 0 : drift, gateAfter: after.gateStock };
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
    await this.record(after, after.gateStock, gateAfter);
    return { ...line, action: 'ADJUSTED', gateAfter };
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
    await retryOnConflict(() =>
      this.deps.unitOfWork.run(async (stores) => {
        await this.products.handle(stores.events, {
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
      }),
    );
  }
}
