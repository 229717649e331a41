/**
 * A buyer's Idempotency-Key, kept for `ttlMs` from the request that first used it. `maxLive` bounds the keys one
 * buyer holds on the product at once (0 or absent: no bound): past it a new key is KEYS_EXHAUSTED.
 */
export type GateKey = Readonly<{ key: string; ttlMs: number; maxLive?: number | undefined }>;

/**
 * A budget the attempt spends before anything else, in the same atomic step: `points` attempts per `windowMs`
 * for one id of its scope (a client address, a buyer), on this product.
 */
export type GateBudget = Readonly<{
  scope: 'address' | 'buyer';
  id: string;
  points: number;
  windowMs: number;
}>;

/** The buyer's duplicate-click lock on the product (the seed's `tryLock(0, lease)`): whose it is, and its lease. */
export type GateLock = Readonly<{ owner: string; leaseMs: number }>;

export type GateReservation = Readonly<{
  productId: number;
  orderId: string;
  userId: string;
  quantity: number;
  perUserLimit: number;
  /** the buyer's key: the outcome is recorded under it in the same atomic step, and a repeat is answered from it */
  idempotency?: GateKey | undefined;
  /**
   * The buyer's lock on the product. Held by another request: LOCKED, and nothing else is done. Taken by an
   * answer that leaves work to do (a reservation to record, a reservation's repeat to answer): every `ok` answer
   * holds it, every refusal leaves it free.
   */
  lock?: GateLock | undefined;
  /** spent first, in this order: one that is used up answers RATE_LIMITED, and nothing else is done */
  budgets?: readonly GateBudget[] | undefined;
  /** the sale path token, used up by this attempt, for a product that requires one (after the key is looked at) */
  pathToken?: string | undefined;
  /** only the key's record may answer (NOT_RECORDED without one): nothing is taken */
  replayOnly?: boolean | undefined;
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
  | Readonly<{ ok: false; reason: 'KEY_REUSED' }>
  /** a budget is used up until `retryAfterMs` from now */
  | Readonly<{ ok: false; reason: 'RATE_LIMITED'; scope: GateBudget['scope']; retryAfterMs: number }>
  /** another request of the buyer holds the lock, for `retryAfterMs` at most */
  | Readonly<{ ok: false; reason: 'LOCKED'; retryAfterMs: number }>
  /** the path token is unknown, used or expired, or another buyer's */
  | Readonly<{ ok: false; reason: 'PATH_TOKEN_INVALID'; redemption: 'UNKNOWN' | 'NOT_YOURS' }>
  /** `replayOnly`, and the key holds nothing */
  | Readonly<{ ok: false; reason: 'NOT_RECORDED' }>
  /** a new key, from a buyer who holds `maxLive` live keys on the product: the first of them ends in `retryAfterMs` */
  | Readonly<{ ok: false; reason: 'KEYS_EXHAUSTED'; retryAfterMs: number }>;

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
 * The stock left and the reservations held (orderId → quantity), read in one atomic step: every unit the stock
 * lacks is in `held` (or was given back by restore), whatever reserves or restores meanwhile.
 */
export type GateSnapshot = Readonly<{ stockLeft: number | null; held: ReadonlyMap<string, number> }>;

/**
 * The fast gate in front of MySQL: one atomic step per order attempt spends the budgets, takes the buyer's lock,
 * looks at the buyer's key, uses the path token up, checks the buyer's limit, checks and decrements the stock,
 * and records the reservation by orderId so that its restore happens at most once. All of a product's keys
 * live together (on Redis, one hash tag), so the step runs on a cluster too.
 */
export interface StockGate {
  /** Loads a product's stock. A live gate is left alone unless `force`: overwriting it would re-open sold stock. */
  warm(productId: number, stock: number, options?: { force?: boolean }): Promise<'WARMED' | 'ALREADY_LIVE'>;
  /**
   * One atomic step, in this order: the budgets (RATE_LIMITED), the gate loaded (NOT_LOADED), the buyer's lock
   * (LOCKED), the key's record (a repeat is answered from it; with `replayOnly` and no record, NOT_RECORDED), the
   * buyer's live keys (KEYS_EXHAUSTED), the path token (PATH_TOKEN_INVALID), the orderId, the per-user limit (LIMIT_EXCEEDED), the stock (SOLD_OUT), and
   * the decrement. A refusal before the key's record writes no record, takes no stock and leaves the lock free.
   * Idempotent by orderId: a retried call for an orderId the gate holds takes nothing again and answers ok
   * with the stock left now; once restored, the orderId is spent and takes nothing either. A refused call
   * took nothing, so a retry of it is asked afresh.
   * With a key, idempotent by the buyer's key too: the reservation or the refusal (SOLD_OUT, LIMIT_EXCEEDED)
   * is recorded under the key in the same atomic step, and a later call with the key is answered from it and
   * takes nothing; a later call for another quantity is KEY_REUSED.
   */
  reserve(reservation: GateReservation): Promise<GateAnswer>;
  /**
   * Frees the buyer's lock on the product if `owner` still holds it; false when it had expired or moved on.
   * It may leave with other unlocks at the next turn of the event loop, never before.
   */
  unlock(productId: number, userId: string, owner: string): Promise<boolean>;
  /**
   * The buyers who ever reserved the product (held or given back), for a product with at most `max` of
   * them; null above that.
   */
  reservedBy(productId: number, max: number): Promise<ReadonlySet<string> | null>;
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
  /**
   * Gives back a reservation MySQL never recorded (reconciliation, once no transaction of it can still commit):
   * its stock and the user's quota, once, and its orderId is spent like a restored one. A repeat with the buyer's
   * key is then asked afresh, as a new order, rather than answered with this one (which would record it with a
   * unit given back). False, leaving it held, when it is not held, when the gate is not loaded, or while the
   * buyer's lock on the product is taken: a request of the buyer may be recording this very order.
   */
  abandon(productId: number, orderId: string): Promise<boolean>;
  /** null when the product's gate is not loaded. */
  stockLeft(productId: number): Promise<number | null>;
  /** Atomic INCRBY/DECRBY of a loaded gate (never a SET); null when not loaded. */
  adjust(productId: number, delta: number): Promise<number | null>;
  /** Reservations the gate holds and has not restored: orderId → quantity. */
  held(productId: number): Promise<Map<string, number>>;
  /** The stock left and the reservations held, in one atomic read (what reconciliation compares with MySQL). */
  snapshot(productId: number): Promise<GateSnapshot>;
}
