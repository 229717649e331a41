import type { OrderStatus } from '../../domain/index.js';

export type PlaceOrderCommand = Readonly<{
  userId: string;
  productId: number;
  quantity: number;
  correlationId: string;
  /** the request's trace, when it is sampled: the order's steps, events and messages carry it on */
  traceparent?: string | undefined;
  /**
   * The address the request came from, for the per-address budget: asked only when that budget is on and the
   * order got past the in-process checks (under a trusted proxy it means parsing X-Forwarded-For).
   */
  clientAddress?: (() => string | undefined) | undefined;
  /** the sale path token, for a product that requires one */
  pathToken?: string | undefined;
  /**
   * The buyer's Idempotency-Key: a repeat of the request (same buyer, same key, same body) is answered as the
   * first one was and takes nothing more, whichever instance answers it and even after a crash.
   */
  idempotencyKey?: string | undefined;
}>;

export type OrderRejectionCode =
  | 'SOLD_OUT'
  | 'LIMIT_EXCEEDED'
  | 'SALE_NOT_ACTIVE'
  | 'DUPLICATE_REQUEST'
  | 'RATE_LIMITED'
  | 'PRODUCT_NOT_FOUND'
  | 'PATH_TOKEN_REQUIRED'
  | 'PATH_TOKEN_INVALID'
  | 'IDEMPOTENCY_KEY_REUSED';

export type OrderRejection = Readonly<{
  ok: false;
  code: OrderRejectionCode;
  detail: string;
  retryAfterMs?: number;
  replayed?: true;
}>;

/** `replayed`: the answer comes from the buyer's key, and `status` is the order's status now. */
export type PlaceOrderResult =
  Readonly<{ ok: true; orderId: string; status: OrderStatus; replayed?: true }> | OrderRejection;

export const rejected = (code: OrderRejectionCode, detail: string, retryAfterMs?: number): OrderRejection =>
  retryAfterMs === undefined ? { ok: false, code, detail } : { ok: false, code, detail, retryAfterMs };

export const soldOutRejection = (productId: number): OrderRejection =>
  rejected('SOLD_OUT', `product ${productId} is sold out`);

export const KEY_REUSED = rejected(
  'IDEMPOTENCY_KEY_REUSED',
  'this Idempotency-Key was used for another order request: a new request takes a new key',
);
