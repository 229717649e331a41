import { expectedGateStock, type OrderStatus } from '../domain/index.js';
import type { StockGate, UnitOfWork } from './ports/index.js';

export type StockReading = Readonly<{
  productId: number;
  mysqlStock: number;
  gateStock: number | null;
  /** units reserved by the gate that MySQL has not decided yet */
  inFlight: number;
  /** units of released orders that the gate still holds */
  releasedNotRestored: number;
  expectedGate: number;
}>;

/**
 * A reading with the orders behind its figures: the released orders the gate holds (`releasedNotRestored`), and
 * where the gate and MySQL part by order. `unrecorded`: held by the gate, not in MySQL (a reservation between the
 * gate and its transaction, or one whose transaction failed and whose unit never went back). `unheld`: live in
 * MySQL (reserved, committed or paid), not held by the gate (reserved after the gate was read, or a reservation
 * the gate lost). orderId → quantity.
 */
export type StockBooks = StockReading &
  Readonly<{
    releasedHeld: ReadonlyMap<string, number>;
    unrecorded: ReadonlyMap<string, number>;
    unheld: ReadonlyMap<string, number>;
  }>;

const EVERY_STATUS: readonly OrderStatus[] = ['RESERVED', 'COMMITTED', 'PAID', 'RELEASED'];
/** what the figures alone need: the orders undecided, and the released ones the gate may still hold */
const OPEN_STATUSES: readonly OrderStatus[] = ['RESERVED', 'RELEASED'];

/**
 * Reads a product's books: the gate in one atomic read (its stock and the reservations it holds), then MySQL in
 * one transaction that writes nothing (the product's orders and its stock as of one moment: a commit lands in
 * both or in neither). What moves between the two reads is told apart by orderId, never guessed from a count.
 */
export class StockBooksReader {
  constructor(private readonly stores: Readonly<{ gate: StockGate; unitOfWork: UnitOfWork }>) {}

  /** Every order of the product is read, for the per-order comparison: what reconciliation decides on. */
  read(productId: number): Promise<StockBooks | null> {
    return readStockBooks(this.stores, productId, EVERY_STATUS);
  }

  /**
   * The figures alone (what the audit compares once the pipeline is quiet): only the undecided and released
   * orders are read, so the cost does not grow with the orders sold. The per-order comparison is left out.
   */
  async figures(productId: number): Promise<StockReading | null> {
    const books = await readStockBooks(this.stores, productId, OPEN_STATUSES);
    if (!books) return null;
    const { releasedHeld: _, unrecorded: __, unheld: ___, ...figures } = books;
    return figures;
  }
}

const readStockBooks = async (
  stores: Readonly<{ gate: StockGate; unitOfWork: UnitOfWork }>,
  productId: number,
  statuses: readonly OrderStatus[],
): Promise<StockBooks | null> => {
  const { stockLeft: gateStock, held } = await stores.gate.snapshot(productId);
  const { product, orders } = await stores.unitOfWork.run(async ({ inventory, orders }) => {
    // both on the transaction's connection, one after the other, in one consistent view
    const [product, list] = await Promise.all([
      inventory.get(productId),
      orders.findByProduct(productId, statuses),
    ]);
    return { product, orders: list };
  });
  if (!product) return null;
  let inFlight = 0;
  let releasedNotRestored = 0;
  const releasedHeld = new Map<string, number>();
  const recorded = new Set<string>();
  const unheld = new Map<string, number>();
  for (const order of orders) {
    recorded.add(order.orderId);
    const isHeld = held.has(order.orderId);
    if (order.status === 'RELEASED') {
      if (!isHeld) continue;
      releasedHeld.set(order.orderId, order.quantity);
      releasedNotRestored += order.quantity;
      continue;
    }
    if (order.status === 'RESERVED') inFlight += order.quantity;
    if (!isHeld) unheld.set(order.orderId, order.quantity);
  }
  const unrecorded = new Map<string, number>();
  for (const [orderId, quantity] of held) if (!recorded.has(orderId)) unrecorded.set(orderId, quantity);
  return {
    productId,
    mysqlStock: product.stock,
    gateStock,
    inFlight,
    releasedNotRestored,
    expectedGate: expectedGateStock({ stock: product.stock, undecided: inFlight, releasedNotRestored }),
    releasedHeld,
    unrecorded,
    unheld,
  };
};
