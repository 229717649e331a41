import { describe, expect, it } from '@jest/globals';
import type { SoldOutFlags, SoldOutMarkOptions } from '../../src/application/index.js';
import { eventually, freshPerTest, type Teardown } from '../support/contract-helpers.js';

/** Two instances sharing one stock-back channel, as two API processes sharing one Redis. */
export type SoldOutFlagsFixture = Readonly<{ first: SoldOutFlags; second: SoldOutFlags }>;

/** A clock the test moves by hand, for the marks' lifetime. */
const MARK_TTL_MS = 2_000;
let clockMs = 0;
const marks: SoldOutMarkOptions = { ttlMs: MARK_TTL_MS, nowMs: () => clockMs };

export const soldOutFlagsContract = (
  name: string,
  make: (marks: SoldOutMarkOptions) => Promise<SoldOutFlagsFixture>,
  teardown?: Teardown<SoldOutFlagsFixture>,
) =>
  describe(`SoldOutFlags contract: ${name}`, () => {
    const flags = freshPerTest(() => make(marks), teardown);

    it('answers sold out only for a product marked sold out', () => {
      const { first } = flags();
      expect(first.isSoldOut(1)).toBe(false);
      first.markSoldOut(1);
      expect(first.isSoldOut(1)).toBe(true);
      expect(first.isSoldOut(2)).toBe(false);
    });

    it('clears the flag on every instance sharing the channel when stock comes back', async () => {
      const { first, second } = flags();
      first.markSoldOut(1);
      second.markSoldOut(1);
      await second.announceStockBack(1);
      await eventually(() => {
        expect(first.isSoldOut(1)).toBe(false);
        expect(second.isSoldOut(1)).toBe(false);
      });
    });

    it('clears only the product whose stock came back', async () => {
      const { first, second } = flags();
      for (const instance of [first, second]) {
        instance.markSoldOut(1);
        instance.markSoldOut(2);
      }
      await first.announceStockBack(1);
      await eventually(() => expect(second.isSoldOut(1)).toBe(false));
      expect(first.isSoldOut(1)).toBe(false);
      expect(first.isSoldOut(2)).toBe(true);
      expect(second.isSoldOut(2)).toBe(true);
    });

    it('lets a product be marked sold out again after its stock came back', async () => {
      const { first, second } = flags();
      second.markSoldOut(1);
      await first.announceStockBack(1);
      await eventually(() => expect(second.isSoldOut(1)).toBe(false));
      second.markSoldOut(1);
      expect(second.isSoldOut(1)).toBe(true);
    });

    it('lets a mark lapse, so a missed "stock back" message costs a short while of refusals, not the sale', () => {
      const { first } = flags();
      clockMs = 1_000_000;
      first.markSoldOut(1);
      clockMs += MARK_TTL_MS - 1;
      expect(first.isSoldOut(1)).toBe(true);
      clockMs += 1;
      // one caller goes to look at the gate; the flood behind it is still refused meanwhile
      expect(first.isSoldOut(1)).toBe(false);
      expect(first.isSoldOut(1)).toBe(true);
      // the gate, asked again, still finds it sold out: the product is marked for another while
      first.markSoldOut(1);
      clockMs += MARK_TTL_MS - 1;
      expect(first.isSoldOut(1)).toBe(true);
    });

    it('sends one more caller to the gate when the one that looked came back with nothing', () => {
      const { first } = flags();
      clockMs = 2_000_000;
      first.markSoldOut(1);
      clockMs += MARK_TTL_MS;
      expect(first.isSoldOut(1)).toBe(false);
      clockMs += MARK_TTL_MS / 4;
      expect(first.isSoldOut(1)).toBe(false);
    });

    it('clears its own mark when the gate took an order, and only its own', () => {
      const { first, second } = flags();
      first.markSoldOut(1);
      second.markSoldOut(1);

      first.markAvailable(1);

      expect(first.isSoldOut(1)).toBe(false);
      expect(second.isSoldOut(1)).toBe(true);
    });
  });
