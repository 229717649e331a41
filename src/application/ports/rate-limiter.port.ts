export interface RateLimiter {
  /** false when the user has used up the allowance of the current window. */
  tryConsume(userId: string): Promise<boolean>;
}
export const RATE_LIMITER = Symbol.for('seckill.RateLimiter');
