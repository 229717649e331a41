import { randomBytes } from 'node:crypto';
import {
  PATH_TOKEN_BYTES,
  type SalePathGrant,
  type SalePathRedemption,
  type SalePaths,
} from '../../application/index.js';

type Issued = Readonly<{ userId: string; productId: number; expiresAtMs: number }>;

/** Sale path tokens of one process, used up by the memory gate. Expired ones are swept, at most once a second, as new ones are issued. */
export class MemorySalePaths implements SalePaths {
  private readonly issued = new Map<string, Issued>();
  private sweptAtMs = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  issue(userId: string, productId: number, ttlMs: number): Promise<SalePathGrant> {
    const now = this.nowMs();
    this.sweep(now);
    const pathToken = randomBytes(PATH_TOKEN_BYTES).toString('base64url');
    const expiresAtMs = now + ttlMs;
    this.issued.set(pathToken, { userId, productId, expiresAtMs });
    return Promise.resolve({ pathToken, expiresAt: new Date(expiresAtMs).toISOString() });
  }

  /**
   * Uses the token up when it was issued to this buyer for this product and has not expired or been used;
   * another buyer's is refused and left for its owner. The memory gate calls it inside its attempt.
   */
  redeemNow(pathToken: string, userId: string, productId: number): SalePathRedemption {
    const found = this.issued.get(pathToken);
    if (!found || found.productId !== productId || found.expiresAtMs <= this.nowMs()) return 'UNKNOWN';
    if (found.userId !== userId) return 'NOT_YOURS';
    this.issued.delete(pathToken);
    return 'REDEEMED';
  }

  private sweep(now: number): void {
    if (now - this.sweptAtMs < 1_000) return;
    this.sweptAtMs = now;
    for (const [token, issued] of this.issued) if (issued.expiresAtMs <= now) this.issued.delete(token);
  }
}
