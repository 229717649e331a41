import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import {
  ALLOWED,
  InfrastructureUnavailable,
  type RateDecision,
  type RateLimiter,
} from '../../application/index.js';
import type { RedisClient } from './redis-connection.js';

/**
 * A budget shared by every API instance, counted in Redis by rate-limiter-flexible. A key (a buyer, an
 * address) that has gone over it is also blocked in this process for the rest of the window, so that a bot's
 * flood costs no further Redis call here.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(
    client: RedisClient,
    options: Readonly<{ points: number; durationSeconds: number; namespace?: string; budget?: string }>,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${options.namespace ?? ''}seckill:rate${options.budget ? `:${options.budget}` : ''}`,
      points: options.points,
      duration: options.durationSeconds,
      inMemoryBlockOnConsumed: options.points + 1,
    });
  }

  async tryConsume(key: string): Promise<RateDecision> {
    try {
      await this.limiter.consume(key);
      return ALLOWED;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        return { allowed: false, retryAfterMs: rejection.msBeforeNext };
      throw new InfrastructureUnavailable('redis', 'rate limiter', { cause: rejection });
    }
  }
}
