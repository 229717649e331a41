import { afterEach, describe, expect, it } from '@jest/globals';
import type { RateLimiter } from '../../src/application/index.js';
import { countWhere, eventually, type Teardown } from '../support/contract-helpers.js';

export type RateLimiterOptions = Readonly<{ points: number; durationSeconds: number }>;

export const rateLimiterContract = (
  name: string,
  make: (options: RateLimiterOptions) => Promise<RateLimiter>,
  teardown?: Teardown<RateLimiter>,
) =>
  describe(`RateLimiter contract: ${name}`, () => {
    const made: RateLimiter[] = [];
    const limiter = async (options: RateLimiterOptions): Promise<RateLimiter> => {
      const instance = await make(options);
      made.push(instance);
      return instance;
    };
    afterEach(async () => {
      for (const instance of made.splice(0)) await teardown?.(instance);
    });

    const consume = async (instance: RateLimiter, userId: string, times: number): Promise<boolean[]> => {
      const answers: boolean[] = [];
      for (let i = 0; i < times; i += 1) answers.push((await instance.tryConsume(userId)).allowed);
      return answers;
    };

    it('allows `points` calls per window, then refuses', async () => {
      const instance = await limiter({ points: 3, durationSeconds: 60 });
      expect(await consume(instance, 'user-1', 5)).toEqual([true, true, true, false, false]);
    });

    it('counts each user on their own', async () => {
      const instance = await limiter({ points: 2, durationSeconds: 60 });
      expect(await consume(instance, 'user-1', 3)).toEqual([true, true, false]);
      expect(await consume(instance, 'user-2', 3)).toEqual([true, true, false]);
    });

    it('allows exactly `points` of many concurrent calls', async () => {
      const instance = await limiter({ points: 10, durationSeconds: 60 });
      const answers = await Promise.all(Array.from({ length: 50 }, () => instance.tryConsume('user-1')));
      expect(countWhere(answers, (decision) => decision.allowed)).toBe(10);
    });

    it('allows the user again in a later window', async () => {
      const instance = await limiter({ points: 1, durationSeconds: 1 });
      expect(await consume(instance, 'user-1', 2)).toEqual([true, false]);
      await eventually(
        async () => expect((await instance.tryConsume('user-1')).allowed).toBe(true),
        5_000,
        100,
      );
    });

    it('tells a refused caller when its window has room again', async () => {
      const instance = await limiter({ points: 1, durationSeconds: 30 });
      expect(await instance.tryConsume('user-1')).toEqual({ allowed: true });
      const refused = await instance.tryConsume('user-1');
      expect(refused.allowed).toBe(false);
      if (refused.allowed) return;
      expect(refused.retryAfterMs).toBeGreaterThan(25_000);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(30_000);
    });
  });
