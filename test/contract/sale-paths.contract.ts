import { describe, expect, it } from '@jest/globals';
import type { SalePaths } from '../../src/application/index.js';
import { freshPerTest, type Teardown } from '../support/contract-helpers.js';

const MINUTE = 60_000;

/** Issuing tokens; the stock-gate contract holds the gate to using them up. */
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

    it('gives every request a token of its own', async () => {
      const grants = await Promise.all(Array.from({ length: 200 }, () => paths().issue('alice', 1, MINUTE)));

      expect(new Set(grants.map((g) => g.pathToken)).size).toBe(200);
    });
  });
