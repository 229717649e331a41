import {
  type OrderCommand,
  type OrderState,
  orderStreamId,
  type ReleaseReason,
  userLimitRejection,
} from '../../domain/index.js';
import { type Loaded, retryOnConflict } from '../command-handler.js';
import { correlationOf, messagesOf, parseReserved, type ReservedPayload } from '../messages.js';
import { type OrderCommands, orderCommands, type OrderDecision, projectOrders } from '../order-stream.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import type {
  Clock,
  IdGenerator,
  InboundMessage,
  Logger,
  Metrics,
  TransactionalStores,
  UnitOfWork,
} from '../ports/index.js';

/** A reservation read from Kafka, with the conversation it belongs to. */
type Reservation = ReservedPayload & Readonly<{ correlationId: string }>;
type Candidate = Readonly<{ order: Reservation; loaded: Loaded<OrderState> }>;

export type CommitReservationsDeps = Readonly<{
  unitOfWork: UnitOfWork;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  metrics: Metrics;
  /** one transaction and one conditional decrement per product and batch; else one per reservation */
  mergeDecrements: boolean;
}>;

/**
 * The commit consumer: MySQL's final word on each reservation. Merged, one transaction per product and batch
 * with set-based statements (one read of the streams, one limit query, one conditional decrement, one insert
 * of events, one read-model write, one outbox write); one by one, a transaction per reservation. The caller
 * acknowledges the batch only after this resolves, so a crash means redelivery, and redelivery of a decided
 * order is skipped.
 */
export class CommitReservations {
  private readonly orders: OrderCommands;

  constructor(private readonly deps: CommitReservationsDeps) {
    this.orders = orderCommands(deps.ids);
  }

  async handle(messages: readonly InboundMessage[]): Promise<void> {
    const byProduct = new Map<number, Reservation[]>();
    for (const message of messages) {
      const payload = parseReserved(message);
      const order = payload && { ...payload, correlationId: correlationOf(message, payload.messageId) };
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
    const now = this.deps.clock.now();
    const outcome = await retryOnConflict(() =>
      this.deps.unitOfWork.run(async (stores) => {
        // the three reads at once: they queue on the transaction's connection without a turn of the event
        // loop between them
        const [product, candidates, held] = await Promise.all([
          stores.inventory.get(productId),
          this.undecided(stores, orders),
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
        const decisions = [
          ...commits.map((c) =>
            this.decision(c, { type: 'CommitStock', orderId: c.order.orderId, now }, now),
          ),
          ...releases.map((r) =>
            this.decision(
              r,
              { type: 'ReleaseReservation', orderId: r.order.orderId, reason: r.reason, now },
              now,
            ),
          ),
        ];
        const messages = messagesOf(decisions.flatMap((d) => d.envelopes));
        // the writes at once, likewise
        await Promise.all([
          this.orders.append(stores.events, decisions),
          projectOrders(stores.orders, decisions),
          stores.outbox.addMany(messages, now),
          stores.outbox.markConsumedMany([...new Set(orders.map((o) => o.messageId))], now),
        ]);
        return { messages, committed: commits.length, released: releases.map((r) => r.reason) };
      }),
    );
    // counted once committed (a transaction that runs again must not count twice)
    this.deps.metrics.count('orders_committed', {}, outcome.committed);
    for (const reason of outcome.released) this.deps.metrics.count('orders_released', { reason });
    this.deps.dispatcher.dispatchSoon(outcome.messages);
  }

  /** Skips orders already decided (a redelivery) and keeps the first copy of a duplicate in the batch. */
  private async undecided(stores: TransactionalStores, orders: readonly Reservation[]): Promise<Candidate[]> {
    const firsts = new Map<string, Reservation>();
    for (const order of orders) if (!firsts.has(order.orderId)) firsts.set(order.orderId, order);
    const loaded = await this.orders.load(stores.events, [...firsts.keys()].map(orderStreamId));
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
  private decision(c: Candidate, command: OrderCommand, now: string): OrderDecision {
    const { correlationId, messageId: causationId } = c.order;
    return this.orders.decideOn(
      { command, context: { occurredAt: now, correlationId, causationId } },
      c.loaded,
    );
  }
}
