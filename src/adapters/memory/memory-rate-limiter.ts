import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ALLOWED, type RateDecision, type RateLimiter } from '../../application/index.js';

export class MemoryRateLimiter implements RateLimiter {
  private readonly limiter: RateLimiterMemory;

  constructor(options: Readonly<{ points: number; durationSeconds: number; keyPrefix?: string }>) {
    this.limiter = new RateLimiterMemory({
      points: options.points,
      duration: options.durationSeconds,
      keyPrefix: options.keyPrefix ?? 'rate',
    });
  }

  async tryConsume(key: string): Promise<RateDecision> {
    try {
      await this.limiter.consume(key);
      return ALLOWED;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        return { allowed: false, retryAfterMs: rejection.msBeforeNext };
      throw rejection;
    }
  }
}
