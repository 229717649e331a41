import type { OrderRejectionCode } from '../../application/index.js';

/**
 * Every way the order route turns an order down: its status and what it means. The route answers with it, the
 * OpenAPI document describes the order route's refusals from it, and the load client counts answers by it, so a
 * new refusal is added here once. (`satisfies` keeps it whole: a code the application can answer with and this
 * table lacks does not compile.)
 */
export const ORDER_REJECTIONS = {
  SOLD_OUT: { status: 409, meaning: 'the product has no stock left' },
  LIMIT_EXCEEDED: { status: 409, meaning: 'the buyer would hold more than the per-user limit' },
  SALE_NOT_ACTIVE: { status: 409, meaning: "the product's sale window is not open" },
  DUPLICATE_REQUEST: { status: 429, meaning: "the buyer's order for this product is already being taken" },
  RATE_LIMITED: {
    status: 429,
    meaning:
      "the buyer's or the client address's budget is spent, the buyer holds as many live Idempotency-Keys as allowed, or the process is taking as many orders as it can",
  },
  PRODUCT_NOT_FOUND: { status: 404, meaning: 'no product has this id' },
  PATH_TOKEN_REQUIRED: { status: 403, meaning: 'the product takes orders with a sale path token' },
  PATH_TOKEN_INVALID: { status: 403, meaning: 'the sale path token is unknown, used or expired' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    meaning: 'the Idempotency-Key was used on this product for another quantity',
  },
} as const satisfies Record<OrderRejectionCode, Readonly<{ status: number; meaning: string }>>;

/** The codes an order can be answered with besides acceptance: the refusals and 503 UNAVAILABLE. */
export const ORDER_ANSWER_CODES: ReadonlySet<string> = new Set([
  ...Object.keys(ORDER_REJECTIONS),
  'UNAVAILABLE',
]);

/** "CODE (meaning), or CODE (meaning)" for every refusal answered with `status`, for the OpenAPI document. */
export const rejectionsAnsweredWith = (status: number): string =>
  Object.entries(ORDER_REJECTIONS)
    .filter(([, rejection]) => rejection.status === status)
    .map(([code, rejection]) => `${code} (${rejection.meaning})`)
    .join(', or ');
