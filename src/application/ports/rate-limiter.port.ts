/** Allowed, or refused until `retryAfterMs` from now (when the caller's window has room again). */
export type RateDecision = Readonly<{ allowed: true }> | Readonly<{ allowed: false; retryAfterMs: number }>;

export const ALLOWED: RateDecision = Object.freeze({ allowed: true });

/** A budget of calls per key (a buyer, a client address) per window. */
export interface RateLimiter {
  tryConsume(key: string): Promise<RateDecision>;
}

/**
 * The budgets the routes spend before their work; a budget that is off is null. The order route's budgets (per
 * buyer and per client address, on the product ordered) are spent by the stock gate, in its atomic step.
 */
export type RateBudgets = Readonly<{
  /** sale path requests per client address */
  pathAddress: RateLimiter | null;
  /** payments, cancellations and sale path requests per buyer */
  write: RateLimiter | null;
  /** reads (an order, its event stream, a product) per buyer, or per client address when anonymous */
  read: RateLimiter | null;
}>;
