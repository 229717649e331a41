import {
  ledgerStock,
  type ReplayOutcome,
  type StoreObservation,
  storeDrift,
  type Violation,
} from '../../domain/index.js';
import type { Clock, EventStore, HistoryFolds } from '../ports/index.js';
import type { StockBooksReader } from '../stock-books.js';

export type AuditProductLine = Readonly<{
  productId: number;
  listed: number;
  added: number;
  committed: number;
  returned: number;
  sold: number;
  replayedStock: number;
  undecided: number;
  mysqlStock: number | null;
  gateStock: number | null;
}>;

export type AuditReport = Readonly<{
  ok: boolean;
  eventsReplayed: number;
  orders: Readonly<Record<string, number>>;
  products: AuditProductLine[];
  violations: Violation[];
}>;

/**
 * Streams the whole event store in global order, a page at a time, and checks it against MySQL and the gate: oversell at any
 * point in history, illegal sequences, per-user limit breaches, stale reservations, and stock drift.
 */
export class AuditHistory {
  constructor(
    private readonly deps: Readonly<{
      events: Pick<EventStore, 'readAll'>;
      /** where the replay's state lives while the pages go by */
      folds: HistoryFolds;
      /** each product's figures now: the gate's, then MySQL's */
      books: StockBooksReader;
      clock: Clock;
      staleAfterMs: number;
      pageSize: number;
    }>,
  ) {}

  async run(): Promise<AuditReport> {
    const replay = await this.replay();
    const violations: Violation[] = [...replay.violations];
    const observations: StoreObservation[] = [];
    const products: AuditProductLine[] = [];
    for (const ledger of replay.products.values()) {
      const books = await this.deps.books.figures(ledger.productId);
      observations.push({
        productId: ledger.productId,
        mysqlStock: books?.mysqlStock ?? null,
        gateStock: books?.gateStock ?? null,
        releasedNotRestored: books?.releasedNotRestored ?? 0,
      });
      products.push({
        productId: ledger.productId,
        listed: ledger.listed,
        added: ledger.added,
        committed: ledger.committed,
        returned: ledger.returned,
        sold: ledger.committed - ledger.returned,
        replayedStock: ledgerStock(ledger),
        undecided: ledger.undecided,
        mysqlStock: books?.mysqlStock ?? null,
        gateStock: books?.gateStock ?? null,
      });
    }
    violations.push(...storeDrift(replay, observations));
    const orders = Object.fromEntries(Object.entries(replay.ordersByStatus).filter(([, n]) => n > 0));
    return {
      ok: violations.length === 0,
      eventsReplayed: replay.eventsReplayed,
      orders,
      products,
      violations,
    };
  }

  /**
   * Streams the store page by page into a fold: this process holds a page or two, the fold its open state. The
   * next page is read while the fold takes the last.
   */
  private async replay(): Promise<ReplayOutcome> {
    const fold = this.deps.folds.open();
    try {
      let folding: Promise<void> = Promise.resolve();
      let after = 0;
      for (;;) {
        const page = await this.deps.events.readAll(after, this.deps.pageSize);
        await folding;
        folding = fold.apply(
          page.map(({ position, streamId, streamVersion, event }) => ({
            position,
            streamId,
            streamVersion,
            event,
          })),
        );
        // awaited before the next page or the end; a read that fails first leaves it handled
        folding.catch(() => undefined);
        const last = page.at(-1);
        if (!last || page.length < this.deps.pageSize) break;
        after = last.position;
      }
      await folding;
      return await fold.finish(this.deps.clock.now(), this.deps.staleAfterMs);
    } finally {
      await fold.close();
    }
  }
}
