import { describe, expect, it } from '@jest/globals';
import type { Clock, IdGenerator } from '../../src/application/index.js';
import { freshPerTest, type Teardown } from '../support/contract-helpers.js';

/**
 * The stores compare instants as strings (`updatedAt < ?`), so the clock must give one fixed-width
 * ISO-8601 UTC form: YYYY-MM-DDTHH:mm:ss.sssZ, where string order is time order.
 */
const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Millisecond rounding of the ISO string on each side of a sleep. */
const ROUNDING_MS = 2;

export const clockContract = (name: string, make: () => Promise<Clock>, teardown?: Teardown<Clock>) =>
  describe(`Clock contract: ${name}`, () => {
    const clock = freshPerTest(make, teardown);

    it('tells the time as a fixed-width ISO-8601 UTC string', () => {
      const now = clock().now();
      expect(now).toMatch(ISO_UTC_MILLIS);
      expect(new Date(now).toISOString()).toBe(now);
    });

    it('never goes backwards', () => {
      const readings = Array.from({ length: 10_000 }, () => clock().now());
      for (let i = 1; i < readings.length; i += 1) {
        const [earlier, later] = [readings[i - 1] ?? '', readings[i] ?? ''];
        expect(later >= earlier).toBe(true);
      }
    });

    it('moves on by at least the time slept', async () => {
      const before = Date.parse(clock().now());
      await clock().sleep(50);
      expect(Date.parse(clock().now()) - before).toBeGreaterThanOrEqual(50 - ROUNDING_MS);
    });
  });

export const idGeneratorContract = (
  name: string,
  make: () => Promise<IdGenerator>,
  teardown?: Teardown<IdGenerator>,
) =>
  describe(`IdGenerator contract: ${name}`, () => {
    const ids = freshPerTest(make, teardown);

    it('gives 10,000 distinct ids', () => {
      const made = Array.from({ length: 10_000 }, () => ids().next());
      expect(new Set(made).size).toBe(10_000);
    });

    it('gives ids that fit in a URL path, a stream name and a Redis key as they are', () => {
      for (let i = 0; i < 100; i += 1) {
        const id = ids().next();
        expect(id.length).toBeGreaterThan(0);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      }
    });
  });
