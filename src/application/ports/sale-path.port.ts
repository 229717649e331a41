/** A sale path token as the buyer receives it. */
export type SalePathGrant = Readonly<{ pathToken: string; expiresAt: string }>;

/** What redeeming a token found: used now, or refused and why. */
export type SalePathRedemption = 'REDEEMED' | 'UNKNOWN' | 'NOT_YOURS';

/**
 * Short-lived, single-use tokens bound to a buyer and a product. A product that requires one takes an order
 * only with a token issued to that buyer for that product, once, before it expires. Shared by every API
 * instance: a token issued by one is used up by another. The stock gate uses a token up, in the same atomic
 * step as the rest of the order attempt (`GateReservation.pathToken`): another buyer's token is refused and
 * left for its owner; an unknown, used or expired one is UNKNOWN.
 */
export interface SalePaths {
  issue(userId: string, productId: number, ttlMs: number): Promise<SalePathGrant>;
}

/** 128 random bits, URL-safe: a token is guessed with no better odds than a UUID. */
export const PATH_TOKEN_BYTES = 16;
