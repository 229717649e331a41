import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { InfrastructureUnavailable, type RateLimiter } from '../../application/index.js';
import type { RedisClient } from './redis-connection.js';

/**
 * Per-user allowance shared by every API instance, counted in Redis by rate-limiter-flexible. A user who has
 * gone over it is also blocked in this process for the rest of the window, so that a bot's flood costs no
 * further Redis call here.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(
    client: RedisClient,
    options: Readonly<{ points: number; durationSeconds: number; namespace?: string }>,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${options.namespace ?? ''}seckill:rate`,
      points: options.points,
      duration: options.durationSeconds,
      inMemoryBlockOnConsumed: options.points + 1,
    });
  }

  async tryConsume(userId: string): Promise<boolean> {
    try {
      await this.limiter.consume(userId);
      return true;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return false;
      throw new InfrastructureUnavailable('redis', 'rate limiter', { cause: rejection });
    }
  }
}
