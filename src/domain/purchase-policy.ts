import type { ProductTerms } from './product.js';

export type PurchaseRejection =
  | Readonly<{ code: 'SALE_NOT_ACTIVE'; detail: string }>
  | Readonly<{ code: 'LIMIT_EXCEEDED'; detail: string }>;

/** The sale window is half-open: [saleStartsAt, saleEndsAt). Absent bounds leave it open. */
export const saleWindowRejection = (terms: ProductTerms, now: string): PurchaseRejection | null => {
  const at = Date.parse(now);
  if (terms.saleStartsAt !== null && at < Date.parse(terms.saleStartsAt))
    return { code: 'SALE_NOT_ACTIVE', detail: `the sale starts at ${terms.saleStartsAt}` };
  if (terms.saleEndsAt !== null && at >= Date.parse(terms.saleEndsAt))
    return { code: 'SALE_NOT_ACTIVE', detail: `the sale ended at ${terms.saleEndsAt}` };
  return null;
};

export const orderSizeRejection = (terms: ProductTerms, quantity: number): PurchaseRejection | null =>
  quantity > terms.maxPerOrder
    ? { code: 'LIMIT_EXCEEDED', detail: `at most ${terms.maxPerOrder} per order` }
    : null;

/**
 * The per-user limit: the units a buyer holds of a product never exceed its `perUserLimit`. The gate's script
 * applies it first, to the units it has let through; MySQL's commit applies it again to what is committed,
 * and the audit checks that history never broke it. All three ask this rule.
 */
export const breaksUserLimit = (perUserLimit: number, held: number): boolean => held > perUserLimit;

/** The per-user limit for a new order: what the buyer already holds, plus what they ask for. */
export const userLimitRejection = (
  terms: Pick<ProductTerms, 'perUserLimit'>,
  alreadyHeld: number,
  quantity: number,
): PurchaseRejection | null =>
  breaksUserLimit(terms.perUserLimit, alreadyHeld + quantity)
    ? { code: 'LIMIT_EXCEEDED', detail: `at most ${terms.perUserLimit} per buyer` }
    : null;

/**
 * What the gate should hold for a product: the stock MySQL has, less the units reserved by the gate and not
 * yet decided by MySQL, less the units of released orders the gate has not been given back yet. Read while
 * orders flow, two more terms: less the units the gate has taken for reservations MySQL has not recorded yet
 * (`unrecorded`), plus the units of orders MySQL recorded that the gate had not taken yet when it was read
 * (`recordedSince`).
 */
export const expectedGateStock = (
  books: Readonly<{
    stock: number;
    undecided: number;
    releasedNotRestored: number;
    unrecorded?: number;
    recordedSince?: number;
  }>,
): number =>
  books.stock -
  books.undecided -
  books.releasedNotRestored -
  (books.unrecorded ?? 0) +
  (books.recordedSince ?? 0);

/** Checks made before the gate, on the hot path, with no I/O: window and order size. */
export const purchaseRejection = (
  terms: ProductTerms,
  quantity: number,
  now: string,
): PurchaseRejection | null => saleWindowRejection(terms, now) ?? orderSizeRejection(terms, quantity);
