/** A buyer's Idempotency-Key, kept for `ttlMs` from the request that first used it. */
export type GateKey = Readonly<{ key: string; ttlMs: number }>;

export type GateReservation = Readonly<{
  productId: number;
  orderId: string;
  userId: string;
  quantity: number;
  perUserLimit: number;
  /** the buyer's key: the outcome is recorded under it in the same atomic step, and a repeat is answered from it */
  idempotency?: GateKey | undefined;
}>;

/** What a buyer's key holds: the reservation it made, or the refusal the gate gave, and for what quantity. */
export type KeyOutcome =
  | Readonly<{ outcome: 'RESERVED'; orderId: string; quantity: number }>
  | Readonly<{ outcome: 'SOLD_OUT' | 'LIMIT_EXCEEDED'; quantity: number }>;

export type GateAnswer =
  | Readonly<{ ok: true; stockLeft: number }>
  /** the key already made a reservation: this one, and nothing was taken now */
  | Readonly<{ ok: true; stockLeft: number; replayOf: string }>
  /** not enough left for this request; `stockLeft` says whether a smaller one could still fit */
  | Readonly<{ ok: false; reason: 'SOLD_OUT'; stockLeft: number; replayed?: true }>
  | Readonly<{ ok: false; reason: 'LIMIT_EXCEEDED'; replayed?: true }>
  | Readonly<{ ok: false; reason: 'NOT_LOADED' }>
  /** the key was used for another quantity */
  | Readonly<{ ok: false; reason: 'KEY_REUSED' }>;

/** How a key's first request is told from a repeat, and a repeat with another body. */
export type KeyClaim = 'NEW' | 'SAME' | 'OTHER';

/** The answer a key's record gives to a request for `quantity`. */
export const answerFromKey = (recorded: KeyOutcome, quantity: number, stockLeft: number): GateAnswer => {
  if (recorded.quantity !== quantity) return { ok: false, reason: 'KEY_REUSED' };
  switch (recorded.outcome) {
    case 'RESERVED':
      return { ok: true, stockLeft, replayOf: recorded.orderId };
    case 'SOLD_OUT':
      return { ok: false, reason: 'SOLD_OUT', stockLeft, replayed: true };
    case 'LIMIT_EXCEEDED':
      return { ok: false, reason: 'LIMIT_EXCEEDED', replayed: true };
  }
};

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
   * With a key, idempotent by the buyer's key too: the reservation or the refusal (SOLD_OUT, LIMIT_EXCEEDED)
   * is recorded under the key in the same atomic step, and a later call with the key is answered from it and
   * takes nothing; a later call for another quantity is KEY_REUSED.
   */
  reserve(reservation: GateReservation): Promise<GateAnswer>;
  /** What a buyer's key holds for a product: null when nothing was recorded, or it expired. */
  recall(productId: number, userId: string, key: string): Promise<KeyOutcome | null>;
  /**
   * Marks a buyer's key as used for a request (`fingerprint`: what the request asked, whatever the product), for
   * `ttlMs`, unless it already was: NEW the first time, then SAME for the same fingerprint and OTHER for another.
   */
  claimKey(userId: string, key: string, fingerprint: string, ttlMs: number): Promise<KeyClaim>;
  /**
   * Gives back a reservation's stock and the user's quota; true only the first time for that orderId. With
   * `forgetKey`, the buyer's key is forgotten too when it holds this reservation: the reservation was never
   * recorded, so a repeat of the request is asked afresh.
   */
  restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean>;
  /** null when the product's gate is not loaded. */
  stockLeft(productId: number): Promise<number | null>;
  /** Atomic INCRBY/DECRBY of a loaded gate (never a SET); null when not loaded. */
  adjust(productId: number, delta: number): Promise<number | null>;
  /** Reservations the gate holds and has not restored: orderId → quantity. */
  held(productId: number): Promise<Map<string, number>>;
}
export const STOCK_GATE = Symbol.for('seckill.StockGate');
