import { type DomainEvent, isOrderEvent, type OrderEvent, type ProductEvent } from './events.js';
import { initialOrderState, type OrderState, transition } from './order.js';
import { breaksUserLimit } from './purchase-policy.js';

export type AuditedEvent = Readonly<{
  position: number;
  streamId: string;
  /** the event's place in its stream, from 1: an order's first event must be its stream's first */
  streamVersion: number;
  event: DomainEvent;
}>;

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

export type AuditReplay = Readonly<{
  products: ReadonlyMap<number, ProductLedger>;
  /** orders still open at the end (reserved or committed); a finished order is counted and let go */
  openOrders: ReadonlyMap<string, OrderState>;
  /** every order, by its status at the end */
  ordersByStatus: Readonly<Record<string, number>>;
  violations: readonly Violation[];
  eventsReplayed: number;
}>;

const heldKey = (userId: string, productId: number): string => `${productId}\u0000${userId}`;

const isOpen = (state: OrderState): boolean => state.status === 'RESERVED' || state.status === 'COMMITTED';

/**
 * Folds the history, in global order and one event at a time, into ledgers, noting every violation on the
 * way. It keeps what the checks need and no more: a ledger per product, the orders still open, and the
 * units each buyer holds. A paid or released order is counted and forgotten: an event after it is caught by
 * its stream version (an order's first event is its stream's first). So memory follows the stock and the
 * orders in flight, not the length of the history.
 */
export class HistoryReplay {
  private readonly products = new Map<number, ProductLedger>();
  private readonly orders = new Map<string, OrderState>();
  private readonly held = new Map<string, number>();
  private readonly byStatus: Record<string, number> = {};
  private readonly violations: Violation[] = [];
  private eventsReplayed = 0;

  apply({ position, streamVersion, event }: AuditedEvent): void {
    this.eventsReplayed += 1;
    if (isOrderEvent(event)) this.applyOrderEvent(position, streamVersion, event);
    else this.applyProductEvent(position, event);
  }

  /** Orders and buyer holdings kept in memory right now. */
  get retained(): number {
    return this.orders.size + this.held.size;
  }

  result(): AuditReplay {
    return {
      products: this.products,
      openOrders: this.orders,
      ordersByStatus: { ...this.byStatus },
      violations: [...this.violations],
      eventsReplayed: this.eventsReplayed,
    };
  }

  private applyProductEvent(position: number, event: ProductEvent): void {
    const ledger = this.products.get(event.data.productId);
    if (event.type === 'ProductListed') {
      if (ledger) {
        this.violations.push({
          kind: 'ILLEGAL_SEQUENCE',
          detail: 'product listed twice',
          productId: ledger.productId,
          position,
        });
        return;
      }
      const { productId, perUserLimit, stock } = event.data;
      this.products.set(productId, {
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
      this.violations.push({
        kind: 'ILLEGAL_SEQUENCE',
        detail: `${event.type} for an unlisted product`,
        productId: event.data.productId,
        position,
      });
      return;
    }
    if (event.type === 'StockAdded') ledger.added += event.data.quantity;
  }

  private applyOrderEvent(position: number, streamVersion: number, event: OrderEvent): void {
    const orderId = event.data.orderId;
    const before = this.orders.get(orderId) ?? initialOrderState;
    // the domain's transition table says what may follow; a forgotten (finished) order has a stream behind it
    const after = before.status === 'NONE' && streamVersion !== 1 ? null : transition(before, event);
    if (after === null || after.status === 'NONE') {
      const status = before.status === 'NONE' && streamVersion !== 1 ? 'finished' : before.status;
      this.violations.push({
        kind: 'ILLEGAL_SEQUENCE',
        detail: `${event.type} on an order that is ${status}`,
        orderId,
        position,
      });
      return;
    }
    this.count(before, after);
    if (isOpen(after)) this.orders.set(orderId, after);
    else this.orders.delete(orderId);
    const ledger = this.products.get(after.productId);
    if (!ledger) {
      this.violations.push({
        kind: 'ILLEGAL_SEQUENCE',
        detail: `${event.type} for an unlisted product`,
        productId: after.productId,
        orderId,
        position,
      });
      return;
    }
    this.moveStock(ledger, before, after, position);
  }

  private count(before: OrderState, after: OrderState): void {
    if (before.status !== 'NONE') this.byStatus[before.status] = (this.byStatus[before.status] ?? 1) - 1;
    this.byStatus[after.status] = (this.byStatus[after.status] ?? 0) + 1;
  }

  private moveStock(ledger: ProductLedger, before: OrderState, after: OrderState, position: number): void {
    if (after.status === 'NONE') return;
    const quantity = after.quantity;
    if (before.status === 'NONE' && after.status === 'RESERVED') ledger.undecided += quantity;
    if (before.status === 'RESERVED' && after.status !== 'RESERVED') ledger.undecided -= quantity;
    if (after.status === 'COMMITTED' && before.status === 'RESERVED') {
      ledger.committed += quantity;
      this.trackHeld(ledger, after, quantity, position);
      const stock = ledgerStock(ledger);
      ledger.lowestStock = Math.min(ledger.lowestStock, stock);
      if (stock < 0) {
        this.violations.push({
          kind: 'OVERSOLD',
          detail: `stock went to ${stock} after committing order ${after.orderId}`,
          productId: ledger.productId,
          orderId: after.orderId,
          position,
        });
      }
    }
    if (after.status === 'RELEASED' && after.stockWasCommitted) {
      ledger.returned += quantity;
      this.trackHeld(ledger, after, -quantity, position);
    }
  }

  private trackHeld(
    ledger: ProductLedger,
    order: OrderState & { userId: string; orderId: string },
    delta: number,
    position: number,
  ): void {
    const key = heldKey(order.userId, ledger.productId);
    const held = (this.held.get(key) ?? 0) + delta;
    if (held === 0) this.held.delete(key);
    else this.held.set(key, held);
    if (breaksUserLimit(ledger.perUserLimit, held)) {
      this.violations.push({
        kind: 'USER_LIMIT_BREACHED',
        detail: `user ${order.userId} holds ${held} units, limit ${ledger.perUserLimit}`,
        productId: ledger.productId,
        orderId: order.orderId,
        position,
      });
    }
  }
}

/** Replays a whole history at once (tests, small stores); the audit streams pages into a `HistoryReplay`. */
export const replayHistory = (history: Iterable<AuditedEvent>): AuditReplay => {
  const replay = new HistoryReplay();
  for (const event of history) replay.apply(event);
  return replay.result();
};
