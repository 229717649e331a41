/** A sale path token as the buyer receives it. */
export type SalePathGrant = Readonly<{ pathToken: string; expiresAt: string }>;

/** What redeeming a token found: used now, or refused and why. */
export type SalePathRedemption = 'REDEEMED' | 'UNKNOWN' | 'NOT_YOURS';

/**
 * Short-lived, single-use tokens bound to a buyer and a product. A product that requires one takes an order
 * only with a token issued to that buyer for that product, once, before it expires. Shared by every API
 * instance: a token issued by one is redeemed by another.
 */
export interface SalePaths {
  issue(userId: string, productId: number, ttlMs: number): Promise<SalePathGrant>;
  /**
   * Uses the token up when it was issued to this buyer for this product and has not expired or been used.
   * Another buyer's token is refused and left for its owner; an unknown, used or expired one is UNKNOWN.
   */
  redeem(pathToken: string, userId: string, productId: number): Promise<SalePathRedemption>;
}
export const SALE_PATHS = Symbol.for('seckill.SalePaths');

/** 128 random bits, URL-safe: a token is guessed with no better odds than a UUID. */
export const PATH_TOKEN_BYTES = 16;
