import { type DomainEvent, isOrderEvent, type OrderEvent, type ProductEvent } from './events.js';
import { evolve, initialOrderState, type OrderState } from './order.js';

export type AuditedEvent = Readonly<{ position: number; streamId: string; event: DomainEvent }>;

export type ViolationKind =
  | 'OVERSOLD'
  | 'ILLEGAL_SEQUENCE'
  | 'USER_LIMIT_BREACHED'
  | 'STALE_RESERVATION'
  | 'MYSQL_STOCK_DRIFT'
  | 'GATE_STOCK_DRIFT';

export type Violation = Readonly<{
  kind: ViolationKind;
  detail: string;
  productId?: number;
  orderId?: string;
  position?: number;
}>;

export type ProductLedger = {
  productId: number;
  perUserLimit: number;
  listed: number;
  added: number;
  committed: number;
  returned: number;
  /** units reserved by the gate and not yet decided by MySQL */
  undecided: number;
  /** the lowest stock seen at any point of history; below 0 means oversold then */
  lowestStock: number;
};

export const ledgerStock = (ledger: ProductLedger): number =>
  ledger.listed + ledger.added - ledger.committed + ledger.returned;

export type AuditReplay = {
  products: Map<number, ProductLedger>;
  orders: Map<string, OrderState>;
  violations: Violation[];
  eventsReplayed: number;
};

const heldKey = (userId: string, productId: number): string => `${productId}\u0000${userId}`;

type Replayer = AuditReplay & { held: Map<string, number> };

const applyProductEvent = (r: Replayer, position: number, event: ProductEvent): void => {
  const ledger = r.products.get(event.data.productId);
  if (event.type === 'ProductListed') {
    if (ledger) {
      r.violations.push({
        kind: 'ILLEGAL_SEQUENCE',
        detail: 'product listed twice',
        productId: ledger.productId,
        position,
      });
      return;
    }
    const { productId, perUserLimit, stock } = event.data;
    r.products.set(productId, {
      productId,
      perUserLimit,
      listed: stock,
      added: 0,
      committed: 0,
      returned: 0,
      undecided: 0,
      lowestStock: stock,
    });
    return;
  }
  if (!ledger) {
    r.violations.push({
      kind: 'ILLEGAL_SEQUENCE',
      detail: `${event.type} for an unlisted product`,
      productId: event.data.productId,
      position,
    });
    return;
  }
  if (event.type === 'StockAdded') ledger.added += event.data.quantity;
};

const trackHeld = (r: Replayer, state: OrderState, delta: number, position: number): void => {
  if (state.status === 'NONE') return;
  const key = heldKey(state.userId, state.productId);
  const held = (r.held.get(key) ?? 0) + delta;
  r.held.set(key, held);
  const ledger = r.products.get(state.productId);
  if (ledger && held > ledger.perUserLimit) {
    r.violations.push({
      kind: 'USER_LIMIT_BREACHED',
      detail: `user ${state.userId} holds ${held} units, limit ${ledger.perUserLimit}`,
      productId: state.productId,
      orderId: state.orderId,
      position,
    });
  }
};

const applyStockMovement = (
  r: Replayer,
  ledger: ProductLedger,
  before: OrderState,
  after: OrderState,
  position: number,
): void => {
  if (after.status === 'NONE') return;
  const quantity = after.quantity;
  if (before.status === 'NONE' && after.status === 'RESERVED') ledger.undecided += quantity;
  if (before.status === 'RESERVED' && after.status !== 'RESERVED') ledger.undecided -= quantity;
  if (after.status === 'COMMITTED' && before.status === 'RESERVED') {
    ledger.committed += quantity;
    trackHeld(r, after, quantity, position);
    const stock = ledgerStock(ledger);
    ledger.lowestStock = Math.min(ledger.lowestStock, stock);
    if (stock < 0) {
      r.violations.push({
        kind: 'OVERSOLD',
        detail: `stock went to ${stock} after committing order ${after.orderId}`,
        productId: ledger.productId,
        orderId: after.orderId,
        position,
      });
    }
  }
  if (after.status === 'RELEASED' && after.stockWasCommitted && before.status === 'COMMITTED') {
    ledger.returned += quantity;
    trackHeld(r, after, -quantity, position);
  }
};

const isLegal = (before: OrderState, event: OrderEvent): boolean => {
  switch (event.type) {
    case 'OrderReserved':
      return before.status === 'NONE';
    case 'StockCommitted':
      return before.status === 'RESERVED';
    case 'ReservationReleased':
      return (
        (before.status === 'RESERVED' && !event.data.stockWasCommitted) ||
        (before.status === 'COMMITTED' && event.data.stockWasCommitted)
      );
    case 'OrderPaid':
      return before.status === 'COMMITTED';
  }
};

const applyOrderEvent = (r: Replayer, position: number, event: OrderEvent): void => {
  const orderId = event.data.orderId;
  const before = r.orders.get(orderId) ?? initialOrderState;
  if (!isLegal(before, event)) {
    r.violations.push({
      kind: 'ILLEGAL_SEQUENCE',
      detail: `${event.type} on an order that is ${before.status}`,
      orderId,
      position,
    });
    return;
  }
  const after = evolve(before, event);
  r.orders.set(orderId, after);
  if (after.status === 'NONE') return;
  const ledger = r.products.get(after.productId);
  if (!ledger) {
    r.violations.push({
      kind: 'ILLEGAL_SEQUENCE',
      detail: `${event.type} for an unlisted product`,
      productId: after.productId,
      orderId,
      position,
    });
    return;
  }
  applyStockMovement(r, ledger, before, after, position);
};

/** Folds the whole history, in global order, into ledgers and order states, noting every violation on the way. */
export const replayHistory = (history: Iterable<AuditedEvent>): AuditReplay => {
  const r: Replayer = {
    products: new Map(),
    orders: new Map(),
    violations: [],
    eventsReplayed: 0,
    held: new Map(),
  };
  for (const { position, event } of history) {
    r.eventsReplayed += 1;
    if (isOrderEvent(event)) applyOrderEvent(r, position, event);
    else applyProductEvent(r, position, event);
  }
  const { held: _held, ...replay } = r;
  return replay;
};

export const staleReservations = (replay: AuditReplay, now: string, staleAfterMs: number): Violation[] => {
  const cutoff = Date.parse(now) - staleAfterMs;
  const stale: Violation[] = [];
  for (const order of replay.orders.values()) {
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

export type StoreObservation = Readonly<{
  productId: number;
  mysqlStock: number | null;
  gateStock: number | null;
  /** units of released orders whose gate reservation is not restored yet */
  releasedNotRestored: number;
}>;

/** What the gate should show: the stock MySQL will have, less what is reserved or released but not restored. */
export const expectedGate = (ledger: ProductLedger, releasedNotRestored: number): number =>
  ledgerStock(ledger) - ledger.undecided - releasedNotRestored;

export const storeDrift = (replay: AuditReplay, observations: readonly StoreObservation[]): Violation[] => {
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
