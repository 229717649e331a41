import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiter } from '../../application/index.js';

export class MemoryRateLimiter implements RateLimiter {
  private readonly limiter: RateLimiterMemory;

  constructor(options: Readonly<{ points: number; durationSeconds: number }>) {
    this.limiter = new RateLimiterMemory({ points: options.points, duration: options.durationSeconds });
  }

  async tryConsume(userId: string): Promise<boolean> {
    try {
      await this.limiter.consume(userId);
      return true;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return false;
      throw rejection;
    }
  }
}
