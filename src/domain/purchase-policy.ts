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

/** The per-user limit counts every unit the user already holds for this product (reserved, committed or paid). */
export const userLimitRejection = (
  terms: ProductTerms,
  alreadyHeld: number,
  quantity: number,
): PurchaseRejection | null =>
  alreadyHeld + quantity > terms.perUserLimit
    ? { code: 'LIMIT_EXCEEDED', detail: `at most ${terms.perUserLimit} per buyer` }
    : null;

/** Checks made before the gate, on the hot path, with no I/O: window and order size. */
export const purchaseRejection = (
  terms: ProductTerms,
  quantity: number,
  now: string,
): PurchaseRejection | null => saleWindowRejection(terms, now) ?? orderSizeRejection(terms, quantity);
