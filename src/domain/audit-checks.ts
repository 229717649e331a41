import { type AuditReplay, ledgerStock, type ProductLedger, type Violation } from './audit.js';
import { expectedGateStock } from './purchase-policy.js';

/** The audit's checks at the end of the replay: reservations left undecided, and the stores' drift. */

export const staleReservations = (
  replay: Pick<AuditReplay, 'openOrders'>,
  now: string,
  staleAfterMs: number,
): Violation[] => {
  const cutoff = Date.parse(now) - staleAfterMs;
  const stale: Violation[] = [];
  for (const order of replay.openOrders.values()) {
    if (order.status === 'RESERVED' && Date.parse(order.reservedAt) < cutoff) {
      stale.push({
        kind: 'STALE_RESERVATION',
        detail: `reserved at ${order.reservedAt} and still undecided`,
        productId: order.productId,
        orderId: order.orderId,
      });
    }
  }
  return stale;
};

/**
 * What the audit reports of a replay once the history has run out: the ledgers, the orders by status, and every
 * violation, reservations left undecided longer than `staleAfterMs` among them. The open orders are let go.
 */
export type ReplayOutcome = Readonly<{
  products: ReadonlyMap<number, ProductLedger>;
  ordersByStatus: Readonly<Record<string, number>>;
  violations: readonly Violation[];
  eventsReplayed: number;
}>;

export const replayOutcome = (replay: AuditReplay, now: string, staleAfterMs: number): ReplayOutcome => ({
  products: replay.products,
  ordersByStatus: replay.ordersByStatus,
  violations: [...replay.violations, ...staleReservations(replay, now, staleAfterMs)],
  eventsReplayed: replay.eventsReplayed,
});

export type StoreObservation = Readonly<{
  productId: number;
  mysqlStock: number | null;
  gateStock: number | null;
  /** units of released orders whose gate reservation is not restored yet */
  releasedNotRestored: number;
}>;

/** What the gate should show by the replayed ledger. */
export const expectedGate = (ledger: ProductLedger, releasedNotRestored: number): number =>
  expectedGateStock({ stock: ledgerStock(ledger), undecided: ledger.undecided, releasedNotRestored });

export const storeDrift = (
  replay: Pick<AuditReplay, 'products'>,
  observations: readonly StoreObservation[],
): Violation[] => {
  const drift: Violation[] = [];
  for (const seen of observations) {
    const ledger = replay.products.get(seen.productId);
    if (!ledger) continue;
    const replayed = ledgerStock(ledger);
    if (seen.mysqlStock !== null && seen.mysqlStock !== replayed) {
      drift.push({
        kind: 'MYSQL_STOCK_DRIFT',
        detail: `MySQL stock ${seen.mysqlStock}, replayed ${replayed}`,
        productId: seen.productId,
      });
    }
    const expected = expectedGate(ledger, seen.releasedNotRestored);
    if (seen.gateStock !== null && seen.gateStock !== expected) {
      drift.push({
        kind: 'GATE_STOCK_DRIFT',
        detail: `gate ${seen.gateStock}, expected ${expected}`,
        productId: seen.productId,
      });
    }
  }
  return drift;
};
