import type { OrderCursor } from '../../application/index.js';
import { z } from 'zod';
import { withDefaultLimits } from '../../domain/index.js';

const MAX_ID = 2_147_483_647;

/**
 * An order request's `Idempotency-Key` header: 1 to 128 printable characters with no space, quotes or
 * comma (a UUID, a ULID, base64url); the quoted form of the IETF draft (`"…"`) is read too.
 */
export const IDEMPOTENCY_KEY = /^[\x21\x23-\x2b\x2d-\x7e]{1,128}$/;
export const IdempotencyKeyHeader = z
  .string()
  .transform((value) =>
    value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value,
  )
  .pipe(
    z
      .string()
      .regex(
        IDEMPOTENCY_KEY,
        'Idempotency-Key must be 1 to 128 printable ASCII characters, with no space, quote or comma',
      ),
  );

export const PlaceOrderBody = z.strictObject({
  productId: z.number().int().min(1).max(MAX_ID),
  quantity: z.number().int().min(1).max(10_000),
  /** the sale path token, for a product that requires one */
  pathToken: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]{16,64}$/,
      'pathToken must be the token POST /api/v1/seckill/products/{id}/path gave',
    )
    .optional(),
});

const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString());

export const ListProductBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    stock: z.number().int().min(0).max(100_000_000),
    perUserLimit: z.number().int().min(1).max(10_000).optional(),
    maxPerOrder: z.number().int().min(1).max(10_000).optional(),
    saleStartsAt: instant.optional(),
    saleEndsAt: instant.optional(),
    requirePathToken: z.boolean().optional(),
  })
  // the limits a listing leaves out are the domain's defaults
  .transform((b) => {
    const { perUserLimit, maxPerOrder } = withDefaultLimits(b);
    return {
      name: b.name,
      stock: b.stock,
      perUserLimit,
      maxPerOrder,
      saleStartsAt: b.saleStartsAt ?? null,
      saleEndsAt: b.saleEndsAt ?? null,
      requirePathToken: b.requirePathToken ?? false,
    };
  });

export const RestockBody = z.strictObject({ quantity: z.number().int().min(1).max(100_000_000) });

export const OrderIdParam = z.uuid({ message: 'orderId must be a UUID' });
export const ProductIdParam = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/, 'productId must be a positive whole number')
  .transform(Number)
  .pipe(z.number().max(MAX_ID, 'productId is too large'));

/** A page of a buyer's orders starts after an order: an opaque base64url cursor of its time and id. */
export const encodeOrderCursor = (cursor: OrderCursor): string =>
  Buffer.from(JSON.stringify([cursor.reservedAt, cursor.orderId])).toString('base64url');

/** An instant as the service writes it (`Date.prototype.toISOString`), and nothing else `Date.parse` accepts. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const OrderCursorParam = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    try {
      const [reservedAt, orderId, ...rest] = JSON.parse(
        Buffer.from(value, 'base64url').toString('utf8'),
      ) as unknown[];
      if (
        rest.length === 0 &&
        typeof reservedAt === 'string' &&
        INSTANT.test(reservedAt) &&
        !Number.isNaN(Date.parse(reservedAt)) &&
        OrderIdParam.safeParse(orderId).success
      )
        return { reservedAt, orderId: orderId as string };
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'cursor must be the `next` of an earlier page' });
    return z.NEVER;
  });

/** `GET /api/v1/orders`: the buyer's own orders, of one product or of all, newest first. */
export const MyOrdersQuery = z.strictObject({
  productId: ProductIdParam.optional(),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, 'limit must be a whole number from 1 to 100')
    .transform(Number)
    .pipe(z.number().max(100, 'limit must be a whole number from 1 to 100'))
    .default(20),
  cursor: OrderCursorParam.optional(),
});
