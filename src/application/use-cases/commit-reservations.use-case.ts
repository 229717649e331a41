import { decide, type OrderCommand, type ReleaseReason } from '../../domain/index.js';
import { compensationMessage, parseReserved, type ReservedPayload } from '../messages.js';
import { type LoadedOrder, loadOrders, type OrderDecision, recordManyOrderEvents } from '../order-stream.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import type {
  Clock,
  InboundMessage,
  Logger,
  Metrics,
  NewOutboxMessage,
  TransactionalStores,
  UnitOfWork,
} from '../ports/index.js';

type Candidate = Readonly<{ order: ReservedPayload; loaded: LoadedOrder }>;

export type CommitReservationsDeps = Readonly<{
  unitOfWork: UnitOfWork;
  dispatcher: OutboxDispatcher;
  clock: Clock;
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
  constructor(private readonly deps: CommitReservationsDeps) {}

  async handle(messages: readonly InboundMessage[]): Promise<void> {
    const byProduct = new Map<number, ReservedPayload[]>();
    for (const message of messages) {
      const order = parseReserved(message);
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

  private async commitProduct(productId: number, orders: readonly ReservedPayload[]): Promise<void> {
    const now = this.deps.clock.now();
    const outcome = await this.deps.unitOfWork.run(async (stores) => {
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
        if (!product || units + quantity > product.perUserLimit) {
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
      const messages: NewOutboxMessage[] = releases.map((r) =>
        compensationMessage({ orderId: r.order.orderId, productId, reason: r.reason }, r.order.orderId),
      );
      // the writes at once, likewise
      await Promise.all([
        recordManyOrderEvents(
          stores,
          [
            ...commits.map((c) => this.decision(c, { type: 'CommitStock', orderId: c.order.orderId, now })),
            ...releases.map((r) =>
              this.decision(r, {
                type: 'ReleaseReservation',
                orderId: r.order.orderId,
                reason: r.reason,
                now,
              }),
            ),
          ],
          now,
        ),
        stores.outbox.addMany(messages, now),
        stores.outbox.markConsumedMany([...new Set(orders.map((o) => o.messageId))], now),
      ]);
      return { messages, committed: commits.length, released: releases.map((r) => r.reason) };
    });
    // counted once committed (a transaction that runs again must not count twice)
    this.deps.metrics.count('orders_committed', {}, outcome.committed);
    for (const reason of outcome.released) this.deps.metrics.count('orders_released', { reason });
    this.deps.dispatcher.dispatchSoon(outcome.messages);
  }

  /** Skips orders already decided (a redelivery) and keeps the first copy of a duplicate in the batch. */
  private async undecided(
    stores: TransactionalStores,
    orders: readonly ReservedPayload[],
  ): Promise<Candidate[]> {
    const firsts = new Map<string, ReservedPayload>();
    for (const order of orders) if (!firsts.has(order.orderId)) firsts.set(order.orderId, order);
    const loaded = await loadOrders(stores, [...firsts.keys()]);
    const candidates: Candidate[] = [];
    for (const [orderId, order] of firsts) {
      const stream = loaded.get(orderId)!;
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

  private decision(c: Candidate, command: OrderCommand): OrderDecision {
    return {
      loaded: c.loaded,
      events: decide(command, c.loaded.state),
      metadata: { causationId: c.order.messageId, userId: c.order.userId },
    };
  }
}
