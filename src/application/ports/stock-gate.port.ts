export type GateReservation = Readonly<{
  productId: number;
  orderId: string;
  userId: string;
  quantity: number;
  perUserLimit: number;
}>;

export type GateAnswer =
  | Readonly<{ ok: true; stockLeft: number }>
  /** not enough left for this request; `stockLeft` says whether a smaller one could still fit */
  | Readonly<{ ok: false; reason: 'SOLD_OUT'; stockLeft: number }>
  | Readonly<{ ok: false; reason: 'LIMIT_EXCEEDED' | 'NOT_LOADED' }>;

/**
 * The fast gate in front of MySQL: one atomic step checks the buyer's limit, checks and decrements the
 * stock, and records the reservation by orderId so that its restore happens at most once.
 */
export interface StockGate {
  /** Loads a product's stock. A live gate is left alone unless `force`: overwriting it would re-open sold stock. */
  warm(productId: number, stock: number, options?: { force?: boolean }): Promise<'WARMED' | 'ALREADY_LIVE'>;
  /**
   * Idempotent by orderId: a retried call for an orderId the gate holds takes nothing again and answers ok
   * with the stock left now; once restored, the orderId is spent and takes nothing either. A refused call
   * took nothing, so a retry of it is asked afresh.
   */
  reserve(reservation: GateReservation): Promise<GateAnswer>;
  /** Gives back a reservation's stock and the user's quota; true only the first time for that orderId. */
  restore(productId: number, orderId: string): Promise<boolean>;
  /** null when the product's gate is not loaded. */
  stockLeft(productId: number): Promise<number | null>;
  /** Atomic INCRBY/DECRBY of a loaded gate (never a SET); null when not loaded. */
  adjust(productId: number, delta: number): Promise<number | null>;
  /** Reservations the gate holds and has not restored: orderId → quantity. */
  held(productId: number): Promise<Map<string, number>>;
}
export const STOCK_GATE = Symbol.for('seckill.StockGate');
