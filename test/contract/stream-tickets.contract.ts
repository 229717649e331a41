import { describe, expect, it } from '@jest/globals';
import type { StreamTickets } from '../../src/application/index.js';
import { eventually, freshPerTest, type Teardown } from '../support/contract-helpers.js';

const MINUTE = 60_000;

/** Tickets that open one order's event stream once, for the buyer they were issued to. */
export const streamTicketsContract = (
  name: string,
  make: () => Promise<StreamTickets>,
  teardown?: Teardown<StreamTickets>,
) =>
  describe(`StreamTickets contract: ${name}`, () => {
    const tickets = freshPerTest(make, teardown);

    it('issues a URL-safe ticket, of its own for every request, that expires after its lifetime', async () => {
      const before = Date.now();
      const issued = await Promise.all(
        Array.from({ length: 100 }, () => tickets().issue('alice', 'o1', MINUTE)),
      );
      expect(issued[0]!.ticket).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(new Set(issued.map((t) => t.ticket)).size).toBe(100);
      expect(Date.parse(issued[0]!.expiresAt)).toBeGreaterThanOrEqual(before + MINUTE);
      expect(Date.parse(issued[0]!.expiresAt)).toBeLessThanOrEqual(Date.now() + MINUTE);
    });

    it('answers the buyer for the order it was issued for, once', async () => {
      const { ticket } = await tickets().issue('alice', 'o1', MINUTE);
      const redeemed = await Promise.all([tickets().redeem(ticket, 'o1'), tickets().redeem(ticket, 'o1')]);
      expect(redeemed.sort()).toEqual(['alice', null]);
      expect(await tickets().redeem(ticket, 'o1')).toBeNull();
    });

    it('answers nothing for another order, an unknown ticket, or one that has expired', async () => {
      const { ticket } = await tickets().issue('alice', 'o1', MINUTE);
      expect(await tickets().redeem(ticket, 'o2')).toBeNull();
      expect(await tickets().redeem('AAAAAAAAAAAAAAAAAAAAAA', 'o1')).toBeNull();
      const short = await tickets().issue('alice', 'o1', 200);
      // its lifetime is over
      await eventually(() => expect(Date.now()).toBeGreaterThan(Date.parse(short.expiresAt) + 50), 3_000, 50);
      expect(await tickets().redeem(short.ticket, 'o1')).toBeNull();
    });
  });
