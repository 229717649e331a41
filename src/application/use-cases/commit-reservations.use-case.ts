import { decide, type OrderCommand, type ReleaseReason } from '../../domain/index.js';
import { compensationMessage, parseReserved, type ReservedPayload } from '../messages.js';
import { type LoadedOrder, loadOrder, recordOrderEvents } from '../order-stream.js';
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
  /** merge one product's orders into one conditional decrement where it fits */
  mergeDecrements: boolean;
}>;

/**
 * The commit consumer: MySQL's final word on each reservation. One transaction per product and batch; the
 * caller acknowledges the batch only after this resolves, so a crash means redelivery, and redelivery of a
 * decided order is skipped.
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
    for (const [productId, orders] of byProduct) await this.commitProduct(productId, orders);
  }

  private async commitProduct(productId: number, orders: readonly ReservedPayload[]): Promise<void> {
    const now = this.deps.clock.now();
    const compensations = await this.deps.unitOfWork.run(async (stores) => {
      const product = await stores.inventory.get(productId);
      const candidates = await this.undecided(stores, orders);
      const releases: Array<Candidate & { reason: ReleaseReason }> = [];
      const withinLimit: Candidate[] = [];
      const heldInBatch = new Map<string, number>();
      for (const candidate of candidates) {
        const { userId, quantity } = candidate.order;
        const held =
          (heldInBatch.get(userId) ?? 0) +
          (await stores.orders.unitsHeld(userId, productId, ['COMMITTED', 'PAID']));
        if (!product || held + quantity > product.perUserLimit) {
          releases.push({ ...candidate, reason: product ? 'LIMIT_EXCEEDED' : 'RESERVATION_FAILED' });
          continue;
        }
        heldInBatch.set(userId, (heldInBatch.get(userId) ?? 0) + quantity);
        withinLimit.push(candidate);
      }
      const taken = await this.decrement(stores, productId, withinLimit);
      const commits = withinLimit.filter((_, i) => taken[i]);
      withinLimit.forEach((c, i) => {
        if (!taken[i]) releases.push({ ...c, reason: 'SOLD_OUT' });
      });
      for (const c of commits)
        await this.record(stores, c, { type: 'CommitStock', orderId: c.order.orderId, now });
      const messages: NewOutboxMessage[] = [];
      for (const r of releases) {
        await this.record(stores, r, {
          type: 'ReleaseReservation',
          orderId: r.order.orderId,
          reason: r.reason,
          now,
        });
        const message = compensationMessage(
          { orderId: r.order.orderId, productId, reason: r.reason },
          r.order.orderId,
        );
        await stores.outbox.add(message, now);
        messages.push(message);
      }
      for (const order of orders) await stores.outbox.markConsumed(order.messageId, now);
      this.deps.metrics.count('orders_committed', {}, commits.length);
      for (const r of releases) this.deps.metrics.count('orders_released', { reason: r.reason });
      return messages;
    });
    this.deps.dispatcher.dispatchSoon(compensations);
  }

  /** Skips orders already decided (a redelivery) and keeps the first copy of a duplicate in the batch. */
  private async undecided(
    stores: TransactionalStores,
    orders: readonly ReservedPayload[],
  ): Promise<Candidate[]> {
    const seen = new Set<string>();
    const candidates: Candidate[] = [];
    for (const order of orders) {
      if (seen.has(order.orderId)) continue;
      seen.add(order.orderId);
      const loaded = await loadOrder(stores, order.orderId);
      if (loaded.state.status === 'RESERVED') candidates.push({ order, loaded });
      else if (loaded.state.status === 'NONE')
        this.deps.logger.error(
          { orderId: order.orderId },
          'reservation message for an order with no history',
        );
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

  private async record(stores: TransactionalStores, c: Candidate, command: OrderCommand): Promise<void> {
    const events = decide(command, c.loaded.state);
    const metadata = { causationId: c.order.messageId, userId: c.order.userId };
    await recordOrderEvents(stores, c.loaded, events, metadata, command.now);
  }
}
