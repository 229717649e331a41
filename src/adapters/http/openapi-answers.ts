import { z } from 'zod';
import { RELEASE_REASONS, type ReleaseReason as ReleaseReasonName } from '../../domain/index.js';

/** The answers of the HTTP API, as zod schemas for the OpenAPI document (openapi.ts). */

const OrderStatus = z.enum(['RESERVED', 'COMMITTED', 'PAID', 'RELEASED']);
const ReleaseReason = z.enum(RELEASE_REASONS as [ReleaseReasonName, ...ReleaseReasonName[]]);

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z
      .string()
      .meta({ description: 'stable machine-readable code, e.g. SOLD_OUT or VALIDATION_FAILED' }),
    detail: z.string(),
    instance: z.string(),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export const OrderAccepted = z
  .object({
    orderId: z.uuid(),
    status: OrderStatus.meta({
      description:
        "RESERVED; a repeat answered from its Idempotency-Key gives the order's status now (COMMITTED, PAID, RELEASED…)",
    }),
  })
  .meta({ id: 'OrderAccepted' });

export const Order = z
  .object({
    orderId: z.uuid(),
    productId: z.number().int(),
    quantity: z.number().int(),
    status: OrderStatus,
    reason: ReleaseReason.optional(),
  })
  .meta({ id: 'Order' });

export const BuyerOrders = z
  .object({
    orders: z.array(
      Order.extend({ reservedAt: z.iso.datetime(), updatedAt: z.iso.datetime() }).meta({ id: 'BuyerOrder' }),
    ),
    next: z.string().nullable().meta({ description: 'the `cursor` of the next page; null on the last one' }),
  })
  .meta({ id: 'BuyerOrders' });

export const Product = z
  .object({
    productId: z.number().int(),
    name: z.string(),
    stockLeft: z.number().int().meta({ description: "the gate's view of the stock" }),
    saleStartsAt: z.iso.datetime().nullable(),
    saleEndsAt: z.iso.datetime().nullable(),
    perUserLimit: z.number().int(),
    maxPerOrder: z.number().int(),
    requirePathToken: z.boolean().meta({
      description: 'orders must carry a sale path token (POST /api/v1/seckill/products/{productId}/path)',
    }),
  })
  .meta({ id: 'Product' });

export const SalePathGrant = z
  .object({
    pathToken: z.string().meta({ description: 'single use, for this buyer and this product' }),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'SalePathGrant' });

export const ProductRecord = z
  .object({
    productId: z.number().int(),
    name: z.string(),
    stock: z.number().int(),
    version: z.number().int(),
    perUserLimit: z.number().int(),
    maxPerOrder: z.number().int(),
    saleStartsAt: z.iso.datetime().nullable(),
    saleEndsAt: z.iso.datetime().nullable(),
    requirePathToken: z.boolean(),
  })
  .meta({ id: 'ProductRecord' });

export const ReconciliationReport = z
  .looseObject({
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    products: z.array(
      z.looseObject({
        productId: z.number().int(),
        mysqlStock: z.number().int(),
        gateStock: z.number().int().nullable(),
        expectedGate: z.number().int(),
        drift: z.number().int(),
        action: z.string(),
        restored: z
          .number()
          .int()
          .meta({ description: 'released orders whose restore the gate had lost, given back to it' }),
      }),
    ),
  })
  .meta({ id: 'ReconciliationReport' });

export const AuditReport = z
  .looseObject({
    ok: z.boolean(),
    eventsReplayed: z.number().int(),
    orders: z.record(z.string(), z.number().int()),
    products: z.array(z.looseObject({ productId: z.number().int() })),
    violations: z.array(z.looseObject({ kind: z.string(), detail: z.string() })),
  })
  .meta({ id: 'AuditReport' });

const InstanceCounts = z
  .object({
    accepted: z.number().int().meta({ description: 'order requests answered 202' }),
    rejected: z.number().int().meta({ description: 'order requests refused with a 4xx' }),
    failed: z.number().int().meta({ description: 'order requests answered with a 5xx' }),
    committed: z.number().int().meta({ description: "orders the process's commit consumer committed" }),
    released: z.number().int().meta({ description: "reservations the process's commit consumer released" }),
  })
  .meta({ description: 'cumulative since the process started' });

const Instance = z
  .object({
    instanceId: z.string().meta({ description: 'host:pid:random, stable for the life of the process' }),
    role: z.enum(['api', 'worker', 'all']),
    pid: z.number().int(),
    host: z.string(),
    startedAt: z.iso.datetime(),
    beatEveryMs: z.number().int(),
    ready: z
      .record(z.string(), z.enum(['ok', 'failing']))
      .meta({ description: "each dependency's check at the last beat, as /readyz words it" }),
    counts: InstanceCounts,
    lastSeenAt: z.iso.datetime(),
    lastSeenAgoMs: z.number().int(),
    status: z.enum(['up', 'degraded', 'down']).meta({
      description: 'down: no beat for 3 intervals; degraded: beating with a dependency failing; up otherwise',
    }),
  })
  .meta({ id: 'Instance' });

export const SaleFigures = z
  .object({
    at: z.iso.datetime(),
    products: z.array(
      z.object({
        productId: z.number().int(),
        name: z.string(),
        requirePathToken: z.boolean().meta({ description: 'orders go through the sale path' }),
        gateStock: z.number().int().nullable(),
        mysqlStock: z.number().int(),
        sold: z.number().int(),
        reserved: z.number().int(),
        released: z.partialRecord(ReleaseReason, z.number().int()),
      }),
    ),
    outbox: z
      .object({
        pending: z.number().int(),
        sent: z.number().int(),
        failed: z.number().int(),
        dead: z.number().int(),
      })
      .meta({ description: 'the rows not consumed yet, by status (consumed rows are not counted)' }),
    consumerLag: z.array(z.object({ groupId: z.string(), topic: z.string(), lag: z.number().int() })),
    rates: z.object({
      acceptedPerSecond: z.number(),
      rejectedPerSecond: z.number(),
      instance: z.string().meta({ description: 'rates are counted per serving process' }),
    }),
    instances: z.array(Instance).meta({
      description: 'every process of the deployment seen in the last 10 minutes, down ones included',
    }),
    totals: InstanceCounts.meta({
      description: "the instances' counts added up, as of each one's last beat",
    }),
  })
  .meta({ id: 'SaleFigures' });

export const Readiness = z
  .object({
    status: z.enum(['ready', 'not ready']),
    checks: z.record(z.string(), z.enum(['ok', 'failing'])),
    details: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "the failing checks' error messages: admins and the metrics port only" }),
  })
  .meta({ id: 'Readiness' });
