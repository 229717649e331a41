import { type ReleaseReason, IllegalOrderTransition, OrderNotFound } from '../../domain/index.js';
import { compensationMessage } from '../messages.js';
import { handleOrderCommand, loadOrder, toView } from '../order-stream.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import type {
  Clock,
  Logger,
  NewOutboxMessage,
  OrderReadModel,
  OrderView,
  UnitOfWork,
} from '../ports/index.js';

/**
 * Ends a reservation without a sale: by the buyer (CANCELLED) or by the payment timeout. Stock that MySQL had
 * committed goes back in the same transaction as the event; the gate gets its share through compensation.
 */
export class ReleaseOrder {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly orders: OrderReadModel,
    private readonly dispatcher: OutboxDispatcher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly paymentTimeoutMs: number,
  ) {}

  /** The owner cancels. Another user's order is answered as not found. */
  async cancel(userId: string, orderId: string, correlationId: string): Promise<OrderView> {
    return this.release(orderId, 'CANCELLED', correlationId, userId);
  }

  /** Releases COMMITTED orders left unpaid for longer than the payment timeout. Returns how many. */
  async releaseExpired(limit = 500): Promise<number> {
    const cutoff = new Date(Date.parse(this.clock.now()) - this.paymentTimeoutMs).toISOString();
    const expired = await this.orders.findByStatus('COMMITTED', cutoff, limit);
    let released = 0;
    for (const order of expired) {
      try {
        const view = await this.release(order.orderId, 'PAYMENT_TIMEOUT', `timeout-${order.orderId}`);
        if (view.status === 'RELEASED') released += 1;
      } catch (error) {
        // Paid in the meantime, or a concurrent change: the next scan looks again.
        if (!(error instanceof IllegalOrderTransition)) throw error;
        this.logger.info({ orderId: order.orderId }, 'order changed before its timeout release');
      }
    }
    return released;
  }

  private async release(
    orderId: string,
    reason: ReleaseReason,
    correlationId: string,
    ownerId?: string,
  ): Promise<OrderView> {
    const now = this.clock.now();
    const { view, messages } = await this.unitOfWork.run(async (stores) => {
      const loaded = await loadOrder(stores, orderId);
      if (loaded.state.status === 'NONE' || (ownerId !== undefined && loaded.state.userId !== ownerId))
        throw new OrderNotFound(orderId);
      const { state, events } = await handleOrderCommand(
        stores,
        { type: 'ReleaseReservation', orderId, reason, now },
        {
          correlationId,
          ...(ownerId === undefined ? {} : { userId: ownerId }),
        },
      );
      const outbound: NewOutboxMessage[] = [];
      for (const event of events) {
        if (event.type !== 'ReservationReleased') continue;
        if (event.data.stockWasCommitted)
          await stores.inventory.increment(event.data.productId, event.data.quantity);
        const message = compensationMessage(
          { orderId, productId: event.data.productId, reason },
          correlationId,
        );
        await stores.outbox.add(message, now);
        outbound.push(message);
      }
      return { view: toView(state, now), messages: outbound };
    });
    this.dispatcher.dispatchSoon(messages);
    if (!view) throw new OrderNotFound(orderId);
    return view;
  }
}
