import { expectedGateStock } from '../domain/index.js';
import type { Inventory, OrderReadModel, StockGate } from './ports/index.js';

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

/** A reading with the orders behind `releasedNotRestored`: released in MySQL, still held by the gate. */
export type StockBooks = StockReading & Readonly<{ releasedHeld: readonly string[] }>;

/** One reading of a product's books: MySQL, the gate, and what is between them. */
export const readStockBooks = async (
  stores: Readonly<{ inventory: Inventory; orders: OrderReadModel; gate: StockGate }>,
  productId: number,
): Promise<StockBooks | null> => {
  // The order of the reads matters while orders flow: held reservations, gate stock, undecided orders,
  // released orders, MySQL stock. A restore, a commit or a release landing between two reads then makes the
  // gate look high, never low, and a high gate is only lowered: a sale lost for a moment, never a sold unit
  // re-opened. The one window left, a reservation between its gate call and its transaction, makes the
  // gate look low; the second reading a settle interval later, after the transaction, tells it apart.
  const held = await stores.gate.held(productId);
  const gateStock = await stores.gate.stockLeft(productId);
  const undecided = await stores.orders.findByProduct(productId, ['RESERVED']);
  const released = await stores.orders.findByProduct(productId, ['RELEASED']);
  const product = await stores.inventory.get(productId);
  if (!product) return null;
  const inFlight = undecided.reduce((sum, o) => sum + o.quantity, 0);
  const releasedHeld = released.filter((o) => held.has(o.orderId));
  const releasedNotRestored = releasedHeld.reduce((sum, o) => sum + o.quantity, 0);
  return {
    productId,
    mysqlStock: product.stock,
    gateStock,
    inFlight,
    releasedNotRestored,
    expectedGate: expectedGateStock({ stock: product.stock, undecided: inFlight, releasedNotRestored }),
    releasedHeld: releasedHeld.map((o) => o.orderId),
  };
};
