import { assertOrderQuantity, orderStreamId, purchaseRejection } from '../../domain/index.js';
import { reservedMessage } from '../messages.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import { toView } from '../order-stream.js';
import type { ProductCatalog } from '../product-catalog.js';
import {
  type Clock,
  type DuplicateRequestLock,
  type IdGenerator,
  InfrastructureUnavailable,
  type Logger,
  type Metrics,
  orderLockKey,
  type RateLimiter,
  type SoldOutFlags,
  type StockGate,
  type UnitOfWork,
} from '../ports/index.js';

export type PlaceOrderCommand = Readonly<{
  userId: string;
  productId: number;
  quantity: number;
  correlationId: string;
}>;

export type OrderRejectionCode =
  | 'SOLD_OUT'
  | 'LIMIT_EXCEEDED'
  | 'SALE_NOT_ACTIVE'
  | 'DUPLICATE_REQUEST'
  | 'RATE_LIMITED'
  | 'PRODUCT_NOT_FOUND';

export type PlaceOrderResult =
  | Readonly<{ ok: true; orderId: string; status: 'RESERVED' }>
  | Readonly<{ ok: false; code: OrderRejectionCode; detail: string }>;

const rejected = (code: OrderRejectionCode, detail: string): PlaceOrderResult => ({
  ok: false,
  code,
  detail,
});

export type PlaceOrderDeps = Readonly<{
  catalog: ProductCatalog;
  rateLimiter: RateLimiter;
  soldOut: SoldOutFlags;
  lock: DuplicateRequestLock;
  gate: StockGate;
  unitOfWork: UnitOfWork;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  metrics: Metrics;
  lockLeaseMs: number;
}>;

/**
 * The hot path. Cheap in-process checks first, then one lock and one atomic gate call in Redis, then one
 * MySQL transaction. The broker is never awaited: the outbox row makes the reservation durable.
 */
export class PlaceOrder {
  constructor(private readonly deps: PlaceOrderDeps) {}

  async execute(cmd: PlaceOrderCommand): Promise<PlaceOrderResult> {
    const { catalog, rateLimiter, soldOut, lock, clock } = this.deps;
    assertOrderQuantity(cmd.quantity);
    // The sold-out flag comes first: once a product is gone, its flood costs no Redis call at all, not even
    // the rate limiter's.
    if (soldOut.isSoldOut(cmd.productId)) return rejected('SOLD_OUT', `product ${cmd.productId} is sold out`);
    if (!(await rateLimiter.tryConsume(cmd.userId)))
      return rejected('RATE_LIMITED', 'too many requests, slow down');
    const terms = await catalog.terms(cmd.productId);
    if (!terms) return rejected('PRODUCT_NOT_FOUND', `product ${cmd.productId} does not exist`);
    const rule = purchaseRejection(terms, cmd.quantity, clock.now());
    if (rule) return rejected(rule.code, rule.detail);

    const handle = await lock.tryLock(orderLockKey(cmd.userId, cmd.productId), {
      waitMs: 0,
      leaseMs: this.deps.lockLeaseMs,
    });
    if (!handle) return rejected('DUPLICATE_REQUEST', 'an order for this product is already being placed');
    try {
      return await this.reserve(cmd, terms.perUserLimit);
    } finally {
      await handle.release().catch((error: unknown) => {
        this.deps.logger.warn(
          { key: handle.key, err: String(error) },
          'lock release failed; it expires on its own',
        );
      });
    }
  }

  private async reserve(cmd: PlaceOrderCommand, perUserLimit: number): Promise<PlaceOrderResult> {
    const { gate, soldOut, ids } = this.deps;
    const orderId = ids.next();
    const answer = await gate.reserve({
      productId: cmd.productId,
      orderId,
      userId: cmd.userId,
      quantity: cmd.quantity,
      perUserLimit,
    });
    if (!answer.ok) {
      switch (answer.reason) {
        case 'SOLD_OUT':
          // only an empty gate turns the flood away in process; a large order must not shut out a small one
          if (answer.stockLeft <= 0) soldOut.markSoldOut(cmd.productId);
          return rejected('SOLD_OUT', `product ${cmd.productId} is sold out`);
        case 'LIMIT_EXCEEDED':
          return rejected('LIMIT_EXCEEDED', `at most ${perUserLimit} per buyer`);
        case 'NOT_LOADED':
          throw new InfrastructureUnavailable(
            'stock gate',
            `product ${cmd.productId} is not loaded in the gate`,
          );
      }
    }
    await this.record(cmd, orderId);
    return { ok: true, orderId, status: 'RESERVED' };
  }

  private async record(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    const { unitOfWork, dispatcher, clock } = this.deps;
    const reservedAt = clock.now();
    const order = {
      orderId,
      productId: cmd.productId,
      userId: cmd.userId,
      quantity: cmd.quantity,
      reservedAt,
    };
    const message = reservedMessage(order, cmd.correlationId);
    try {
      await unitOfWork.run(async (stores) => {
        const event = { type: 'OrderReserved', data: order } as const;
        await stores.events.append(orderStreamId(orderId), [event], 0, {
          correlationId: cmd.correlationId,
          userId: cmd.userId,
        });
        const view = toView({ status: 'RESERVED', ...order }, reservedAt);
        if (view) await stores.orders.upsert(view);
        await stores.outbox.add(message, reservedAt);
      });
    } catch (error) {
      await this.restoreGate(cmd.productId, orderId);
      if (error instanceof InfrastructureUnavailable) throw error;
      throw new InfrastructureUnavailable('database', 'the reservation could not be recorded', {
        cause: error,
      });
    }
    dispatcher.dispatchSoon([message]);
  }

  private async restoreGate(productId: number, orderId: string): Promise<void> {
    try {
      await this.deps.gate.restore(productId, orderId);
    } catch (error) {
      // An under-counted gate loses a sale; it never oversells. Reconciliation gives the unit back.
      this.deps.metrics.count('gate_restore_failures');
      this.deps.logger.error(
        { productId, orderId, err: String(error) },
        'gate restore failed after a failed transaction',
      );
    }
  }
}
