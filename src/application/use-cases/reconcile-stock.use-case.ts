import { expectedGateStock } from '../../domain/index.js';
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
import type { StockBooks, StockBooksReader, StockReading } from '../stock-books.js';

type GivenBack = Readonly<{ orders: number; units: number }>;
const NOTHING: GivenBack = { orders: 0, units: 0 };

export type ReconciliationAction = 'IN_STEP' | 'ADJUSTED' | 'REBUILT' | 'UNSETTLED';

export type ReconciliationLine = StockReading &
  Readonly<{
    drift: number;
    action: ReconciliationAction;
    gateAfter: number | null;
    /**
     * orders whose unit this run gave back to the gate: released orders whose restore the gate had lost, and
     * reservations MySQL never recorded
     */
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
 * while reservations are in flight would sell units that MySQL must then refuse.
 *
 * Orders flow while it reads, so each reading is taken apart by orderId: a reservation between the gate and its
 * transaction (held, not in MySQL) and an order MySQL recorded after the gate was read (in MySQL, not held, and
 * held at the other reading) are passing through, and their units are counted where they are going. What is
 * left is a drift: a reservation the gate lost (not held at either reading), a restore it lost, a hand edit. A
 * drift is fixed only when two readings a settle interval apart agree, and only with INCRBY/DECRBY, which keeps
 * concurrent decrements. (Comparing counts alone, steady traffic looks like a drift: eight buyers always
 * between the gate and MySQL read as a gate eight units low at both readings, and an INCRBY of eight re-opens
 * units that MySQL then refuses to buyers already told their order was accepted.)
 *
 * Two kinds of units are given back by orderId, once per order, rather than by a count:
 * - a released order the gate still holds at both readings, with the compensation's own restore (whoever comes
 *   first): its restore was lost, say by a Redis failover that dropped the acknowledged write, and no message
 *   will bring it again;
 * - a reservation MySQL lacks at both readings, once its transaction can no longer commit (the transaction
 *   failed and the restore after it failed too, or its commit went unanswered and never landed): the gate
 *   abandons it, the unit and the buyer's count on the product go back, and a repeat with the buyer's key is
 *   then a new order rather than this one recorded late with a unit given back.
 * Left alone, either unit would never be offered again.
 */
export class ReconcileStock {
  constructor(
    private readonly deps: Readonly<{
      products: ProductCommands;
      inventory: Inventory;
      orders: OrderReadModel;
      /** each reading: the gate's, then MySQL's */
      books: StockBooksReader;
      gate: StockGate;
      soldOut: SoldOutFlags;
      clock: Clock;
      /** names each run's conversation */
      ids: IdGenerator;
      logger: Logger;
      metrics: Metrics;
      settleMs: number;
      /**
       * the longest from a reservation's gate call to the end of its transaction (the group commit's wait and the
       * transaction's deadline): after it, a reservation MySQL lacks never lands
       */
      recordDeadlineMs: number;
    }>,
  ) {}

  async run(): Promise<ReconciliationReport> {
    const startedAt = this.deps.clock.now();
    const products = await this.deps.inventory.list();
    const first = new Map<number, Readonly<{ reading: StockBooks; readAt: number }>>();
    for (const p of products) {
      // taken before the gate is read: a reservation held at this reading was made before it
      const readAt = Date.parse(this.deps.clock.now());
      const reading = await this.deps.books.read(p.productId);
      if (reading) first.set(p.productId, { reading, readAt });
    }
    await this.deps.clock.sleep(this.deps.settleMs);
    const lines: ReconciliationLine[] = [];
    for (const [productId, { reading: before, readAt }] of first) {
      const after = await this.deps.books.read(productId);
      if (after) lines.push(await this.settle(before, after, readAt));
    }
    return { startedAt, finishedAt: this.deps.clock.now(), products: lines };
  }

  private async settle(
    before: StockBooks,
    books: StockBooks,
    firstReadAt: number,
  ): Promise<ReconciliationLine> {
    const { releasedHeld: _, unrecorded: __, unheld: ___, ...after } = books;
    const expected = settledGate(books, before);
    const drift = after.gateStock === null ? Number.NaN : after.gateStock - expected;
    const driftBefore =
      before.gateStock === null ? Number.NaN : before.gateStock - settledGate(before, books);
    // a restore changes the gate and the expected gate alike: the drift read before it still holds
    const lost = await this.restoreLost(before, books);
    const stranded = await this.restoreStranded(before, books, firstReadAt);
    const restored = { orders: lost.orders + stranded.orders, units: lost.units + stranded.units };
    const line = {
      ...after,
      // what the gate should hold once this run's restores are in
      expectedGate: after.gateStock === null ? after.expectedGate : expected + restored.units,
      drift: Number.isNaN(drift) ? 0 : drift,
      gateAfter: after.gateStock === null ? null : after.gateStock + restored.units,
      restored: restored.orders,
    };
    if (after.gateStock === null && before.gateStock === null) {
      if (after.expectedGate !== before.expectedGate) return { ...line, action: 'UNSETTLED' };
      const warmed = await this.deps.gate.warm(after.productId, Math.max(0, after.expectedGate));
      if (warmed === 'ALREADY_LIVE') return { ...line, action: 'UNSETTLED' };
      await this.record(line, null, Math.max(0, after.expectedGate));
      return { ...line, action: 'REBUILT', gateAfter: Math.max(0, after.expectedGate) };
    }
    this.deps.metrics.gauge('stock_drift', line.drift, { product: String(after.productId) });
    if (drift === 0) return { ...line, action: 'IN_STEP' };
    if (drift !== driftBefore) return { ...line, action: 'UNSETTLED' };
    const gateAfter = await this.deps.gate.adjust(after.productId, -drift);
    if (gateAfter === null) return { ...line, action: 'UNSETTLED' };
    await this.record(line, line.gateAfter, gateAfter);
    return { ...line, action: 'ADJUSTED', gateAfter };
  }

  /** Restores the released orders the gate held at both readings (never a gate that is missing). */
  private async restoreLost(before: StockBooks, after: StockBooks): Promise<GivenBack> {
    if (before.gateStock === null || after.gateStock === null) return NOTHING;
    const { productId } = after;
    let orders = 0;
    let units = 0;
    for (const [orderId, quantity] of after.releasedHeld) {
      if (!before.releasedHeld.has(orderId) || !(await this.deps.gate.restore(productId, orderId))) continue;
      orders += 1;
      units += quantity;
    }
    return this.gaveBack(productId, { orders, units }, 'gate restores the gate had lost, given back');
  }

  /**
   * Gives back (abandons) the reservations the gate held and MySQL lacked at both readings (never on a gate that
   * is missing), once none of their transactions can still commit — each was made before the first reading —
   * and if MySQL still lacks them then. The gate leaves one alone while its buyer has a request in progress.
   */
  private async restoreStranded(
    before: StockBooks,
    after: StockBooks,
    firstReadAt: number,
  ): Promise<GivenBack> {
    if (before.gateStock === null || after.gateStock === null) return NOTHING;
    const candidates = [...after.unrecorded.keys()].filter((orderId) => before.unrecorded.has(orderId));
    if (candidates.length === 0) return NOTHING;
    const { clock, orders: readModel, gate, recordDeadlineMs } = this.deps;
    const wait = firstReadAt + recordDeadlineMs - Date.parse(clock.now());
    if (wait > 0) await clock.sleep(wait);
    const recorded = await readModel.getMany(candidates);
    const { productId } = after;
    let orders = 0;
    let units = 0;
    for (const orderId of candidates) {
      if (recorded.has(orderId) || !(await gate.abandon(productId, orderId))) continue;
      orders += 1;
      units += after.unrecorded.get(orderId) ?? 0;
    }
    return this.gaveBack(
      productId,
      { orders, units },
      'units the gate held for reservations MySQL never recorded, given back',
    );
  }

  /** Counts and says what a run gave back by orderId, and tells the sold-out marks the stock is back. */
  private async gaveBack(productId: number, given: GivenBack, message: string): Promise<GivenBack> {
    if (given.orders === 0) return NOTHING;
    this.deps.metrics.count('reconciliation_restores', { product: String(productId) }, given.orders);
    this.deps.logger.warn({ productId, ...given }, message);
    await this.deps.soldOut.announceStockBack(productId);
    return given;
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

/**
 * What the gate should hold by one reading, what passes through counted where it is going: a reservation held and
 * not in MySQL has taken its unit already, an order MySQL recorded that was not held at this reading but was at
 * the other one had not taken it yet. A reservation MySQL lacked at both readings is given back by orderId, so it
 * is counted as held too.
 */
const settledGate = (reading: StockBooks, other: StockBooks): number => {
  let unrecorded = 0;
  for (const quantity of reading.unrecorded.values()) unrecorded += quantity;
  let recordedSince = 0;
  for (const [orderId, quantity] of reading.unheld) if (!other.unheld.has(orderId)) recordedSince += quantity;
  return expectedGateStock({
    stock: reading.mysqlStock,
    undecided: reading.inFlight,
    releasedNotRestored: reading.releasedNotRestored,
    unrecorded,
    recordedSince,
  });
};
