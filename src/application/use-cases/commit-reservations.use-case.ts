import {
  type OrderCommand,
  type OrderEvent,
  type OrderState,
  orderStreamId,
  type ReleaseReason,
  userLimitRejection,
} from '../../domain/index.js';
import type { Loaded, WriteTransaction } from '../command-handler.js';
import { correlationOf, parseReserved, type ReservedPayload, traceOf } from '../messages.js';
import type { OrderCommands, OrderDecision } from '../order-stream.js';
import {
  type Clock,
  type InboundMessage,
  type Logger,
  type Metrics,
  NO_TRACING,
  type Tracer,
  type TransactionalStores,
} from '../ports/index.js';
import { Spans } from '../traced-messaging.js';

/** A reservation read from Kafka, with the conversation it belongs to and the buyer's trace, if sampled. */
type Reservation = ReservedPayload & Readonly<{ correlationId: string; traceparent?: string }>;
type Candidate = Readonly<{ order: Reservation; loaded: Loaded<OrderState> }>;
type OrderWrite = WriteTransaction<OrderCommand, OrderEvent, OrderState>;

export type CommitReservationsDeps = Readonly<{
  orders: OrderCommands;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** one transaction and one conditional decrement per product and batch; else one per reservation */
  mergeDecrements: boolean;
  /** a span per transaction in each of its orders' traces (none when absent) */
  tracer?: Tracer;
}>;

/**
 * The commit consumer: MySQL's final word on each reservation. Merged, one transaction per product and batch
 * with set-based statements (one read of the streams, one limit query, one conditional decrement, one insert
 * of events, one read-model write, one outbox write); one by one, a transaction per reservation. The caller
 * acknowledges the batch only after this resolves, so a crash means redelivery, and redelivery of a decided
 * order is skipped.
 */
export class CommitReservations {
  constructor(private readonly deps: CommitReservationsDeps) {}

  async handle(messages: readonly InboundMessage[]): Promise<void> {
    const byProduct = new Map<number, Reservation[]>();
    for (const message of messages) {
      const payload = parseReserved(message);
      const traceparent = this.deps.tracer?.enabled ? traceOf(message) : undefined;
      const order = payload && {
        ...payload,
        correlationId: correlationOf(message, payload.messageId),
        ...(traceparent === undefined ? {} : { traceparent }),
      };
      if (!order) {
        this.deps.logger.error(
          { offset: message.offset, partition: message.partition },
          'unreadable reservation message skipped',
        );
        continue;
      }
      const list = byProduct.get(order.productId) ?? [];
      list.push(order);
      byProduct.set(order.productId, list);
    }
    for (const [productId, orders] of byProduct)
      if (this.deps.mergeDecrements) await this.commitProduct(productId, orders);
      else for (const order of orders) await this.commitProduct(productId, [order]);
  }

  /** A stream that changed under it (a buyer's cancel) sends the whole transaction round again. */
  private async commitProduct(productId: number, orders: readonly Reservation[]): Promise<void> {
    const tracer = this.deps.tracer ?? NO_TRACING;
    if (!tracer.enabled) return this.commitIn(productId, orders);
    return tracer.batch(
      Spans.COMMIT_TRANSACTION,
      orders.map((o) => o.traceparent),
      () => this.commitIn(productId, orders),
      {
        kind: 'client',
        attributes: { 'seckill.product_id': productId, 'seckill.batch.orders': orders.length },
      },
    );
  }

  private async commitIn(productId: number, orders: readonly Reservation[]): Promise<void> {
    const now = this.deps.clock.now();
    const outcome = await this.deps.orders.write(async (tx) => {
      const { stores } = tx;
      // the three reads at once: they queue on the transaction's connection without a turn of the event
      // loop between them
      const [product, candidates, held] = await Promise.all([
        stores.inventory.get(productId),
        this.undecided(tx, orders),
        stores.orders.unitsHeldByUsers(
          orders.map((o) => o.userId),
          productId,
          ['COMMITTED', 'PAID'],
        ),
      ]);
      const releases: Array<Candidate & { reason: ReleaseReason }> = [];
      const withinLimit: Candidate[] = [];
      for (const candidate of candidates) {
        const { userId, quantity } = candidate.order;
        const units = held.get(userId) ?? 0;
        if (!product || userLimitRejection(product, units, quantity)) {
          releases.push({ ...candidate, reason: product ? 'LIMIT_EXCEEDED' : 'RESERVATION_FAILED' });
          continue;
        }
        held.set(userId, units + quantity);
        withinLimit.push(candidate);
      }
      const taken = await this.decrement(stores, productId, withinLimit);
      const commits = withinLimit.filter((_, i) => taken[i]);
      withinLimit.forEach((c, i) => {
        if (!taken[i]) releases.push({ ...c, reason: 'SOLD_OUT' });
      });
      for (const c of commits)
        this.decide(tx, c, { type: 'CommitStock', orderId: c.order.orderId, now }, now);
      for (const r of releases)
        this.decide(
          tx,
          r,
          { type: 'ReleaseReservation', orderId: r.order.orderId, reason: r.reason, now },
          now,
        );
      // the reservations' messages are consumed with the decisions, in the same go
      tx.also(() => stores.outbox.markConsumedMany([...new Set(orders.map((o) => o.messageId))], now));
      return { committed: commits.length, released: releases.map((r) => r.reason) };
    });
    // counted once committed (a transaction that runs again must not count twice)
    this.deps.metrics.count('orders_committed', {}, outcome.committed);
    for (const reason of outcome.released) this.deps.metrics.count('orders_released', { reason });
  }

  /** Skips orders already decided (a redelivery) and keeps the first copy of a duplicate in the batch. */
  private async undecided(tx: OrderWrite, orders: readonly Reservation[]): Promise<Candidate[]> {
    const firsts = new Map<string, Reservation>();
    for (const order of orders) if (!firsts.has(order.orderId)) firsts.set(order.orderId, order);
    const loaded = await tx.load([...firsts.keys()].map(orderStreamId));
    const candidates: Candidate[] = [];
    for (const [orderId, order] of firsts) {
      const stream = loaded.get(orderStreamId(orderId))!;
      if (stream.state.status === 'RESERVED') candidates.push({ order, loaded: stream });
      else if (stream.state.status === 'NONE')
        this.deps.logger.error({ orderId }, 'reservation message for an order with no history');
    }
    return candidates;
  }

  private async decrement(
    stores: TransactionalStores,
    productId: number,
    candidates: readonly Candidate[],
  ): Promise<boolean[]> {
    const quantities = candidates.map((c) => c.order.quantity);
    if (quantities.length === 0) return [];
    if (this.deps.mergeDecrements) return stores.inventory.decrementMany(productId, quantities);
    const taken: boolean[] = [];
    for (const quantity of quantities) taken.push(await stores.inventory.tryDecrement(productId, quantity));
    return taken;
  }

  /** The order's events carry the buyer's conversation on, caused by the reservation message. */
  private decide(tx: OrderWrite, c: Candidate, command: OrderCommand, now: string): OrderDecision {
    const { correlationId, messageId: causationId, traceparent } = c.order;
    const context = { occurredAt: now, correlationId, causationId, ...(traceparent ? { traceparent } : {}) };
    return tx.decideOn({ command, context }, c.loaded);
  }
}
