/** Allowed, or refused until `retryAfterMs` from now (when the caller's window has room again). */
export type RateDecision = Readonly<{ allowed: true }> | Readonly<{ allowed: false; retryAfterMs: number }>;

export const ALLOWED: RateDecision = Object.freeze({ allowed: true });

/** A budget of calls per key (a buyer, a client address) per window. */
export interface RateLimiter {
  tryConsume(key: string): Promise<RateDecision>;
}

/** The budgets the service applies (DESIGN §3, Admission); a budget that is off is null. */
export type RateBudgets = Readonly<{
  /** order requests per buyer */
  orderUser: RateLimiter | null;
  /** order and sale path requests per client address */
  orderAddress: RateLimiter | null;
  /** payments, cancellations and sale path requests per buyer */
  write: RateLimiter | null;
  /** reads (an order, its event stream, a product) per buyer, or per client address when anonymous */
  read: RateLimiter | null;
}>;
export const RATE_BUDGETS = Symbol.for('seckill.RateBudgets');
