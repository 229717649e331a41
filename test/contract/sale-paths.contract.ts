import { describe, expect, it } from '@jest/globals';
import type { SalePaths } from '../../src/application/index.js';
import { countWhere, eventually, freshPerTest, type Teardown } from '../support/contract-helpers.js';

const MINUTE = 60_000;

export const salePathsContract = (
  name: string,
  make: () => Promise<SalePaths>,
  teardown?: Teardown<SalePaths>,
) =>
  describe(`SalePaths contract: ${name}`, () => {
    const paths = freshPerTest(make, teardown);

    it('issues a URL-safe token that expires after its lifetime', async () => {
      const before = Date.now();
      const grant = await paths().issue('alice', 1, MINUTE);

      expect(grant.pathToken).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Date.parse(grant.expiresAt)).toBeGreaterThanOrEqual(before + MINUTE);
      expect(Date.parse(grant.expiresAt)).toBeLessThanOrEqual(Date.now() + MINUTE);
    });

    it('redeems a token once, for the buyer and the product it was issued to', async () => {
      const { pathToken } = await paths().issue('alice', 1, MINUTE);

      expect(await paths().redeem(pathToken, 'alice', 1)).toBe('REDEEMED');
      expect(await paths().redeem(pathToken, 'alice', 1)).toBe('UNKNOWN');
    });

    it("refuses another buyer's token and leaves it for its owner", async () => {
      const { pathToken } = await paths().issue('alice', 1, MINUTE);

      expect(await paths().redeem(pathToken, 'mallory', 1)).toBe('NOT_YOURS');
      expect(await paths().redeem(pathToken, 'alice', 1)).toBe('REDEEMED');
    });

    it('knows a token only for its own product, and no token it never issued', async () => {
      const { pathToken } = await paths().issue('alice', 1, MINUTE);

      expect(await paths().redeem(pathToken, 'alice', 2)).toBe('UNKNOWN');
      expect(await paths().redeem('A'.repeat(22), 'alice', 1)).toBe('UNKNOWN');
      expect(await paths().redeem(pathToken, 'alice', 1)).toBe('REDEEMED');
    });

    it('forgets a token once it has expired', async () => {
      const { pathToken } = await paths().issue('alice', 1, 300);

      await eventually(
        async () => expect(await paths().redeem(pathToken, 'alice', 1)).toBe('UNKNOWN'),
        5_000,
        50,
      );
    });

    it('redeems a token exactly once among many concurrent tries', async () => {
      const { pathToken } = await paths().issue('alice', 1, MINUTE);

      const answers = await Promise.all(
        Array.from({ length: 50 }, () => paths().redeem(pathToken, 'alice', 1)),
      );

      expect(countWhere(answers, (a) => a === 'REDEEMED')).toBe(1);
    });

    it('gives every request a token of its own', async () => {
      const grants = await Promise.all(Array.from({ length: 200 }, () => paths().issue('alice', 1, MINUTE)));

      expect(new Set(grants.map((g) => g.pathToken)).size).toBe(200);
    });
  });
