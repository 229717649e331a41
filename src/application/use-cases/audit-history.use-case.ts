import {
  type AuditReplay,
  HistoryReplay,
  ledgerStock,
  staleReservations,
  type StoreObservation,
  storeDrift,
  type Violation,
} from '../../domain/index.js';
import type { Clock, EventStore } from '../ports/index.js';
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
      /** each product's figures now: the gate's, then MySQL's */
      books: StockBooksReader;
      clock: Clock;
      staleAfterMs: number;
      pageSize: number;
    }>,
  ) {}

  async run(): Promise<AuditReport> {
    const replay = await this.replay();
    const violations: Violation[] = [
      ...replay.violations,
      ...staleReservations(replay, this.deps.clock.now(), this.deps.staleAfterMs),
    ];
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

  /** Streams the store page by page into the replay: memory holds one page and the replay's open state. */
  private async replay(): Promise<AuditReplay> {
    const replay = new HistoryReplay();
    let after = 0;
    for (;;) {
      const page = await this.deps.events.readAll(after, this.deps.pageSize);
      for (const stored of page) replay.apply(stored);
      const last = page.at(-1);
      if (!last || page.length < this.deps.pageSize) return replay.result();
      after = last.position;
    }
  }
}
