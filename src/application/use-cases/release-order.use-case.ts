import { type ReleaseReason, IllegalOrderTransition, OrderNotFound } from '../../domain/index.js';
import { type EventContext, retryOnConflict } from '../command-handler.js';
import { messagesOf } from '../messages.js';
import { type OrderCommands, orderCommands, orderRows } from '../order-stream.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import type {
  Clock,
  IdGenerator,
  Logger,
  StoredEvent,
  OrderReadModel,
  OrderView,
  UnitOfWork,
} from '../ports/index.js';

/**
 * Ends a reservation without a sale: by the buyer (CANCELLED) or by the payment timeout. Stock that MySQL had
 * committed goes back in the same transaction as the event; the gate gets its share through compensation.
 */
export class ReleaseOrder {
  private readonly commands: OrderCommands;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly orders: OrderReadModel,
    private readonly dispatcher: OutboxDispatcher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly paymentTimeoutMs: number,
    ids: IdGenerator,
  ) {
    this.commands = orderCommands(ids);
  }

  /** The owner cancels: the buyer's request is the conversation. Another user's order is answered as not found. */
  async cancel(userId: string, orderId: string, correlationId: string): Promise<OrderView> {
    const now = this.clock.now();
    return this.release(orderId, 'CANCELLED', now, userId, {
      occurredAt: now,
      correlationId,
      causationId: correlationId,
      userId,
    });
  }

  /** Releases COMMITTED orders left unpaid for longer than the payment timeout. Returns how many. */
  async releaseExpired(limit = 500): Promise<number> {
    const cutoff = new Date(Date.parse(this.clock.now()) - this.paymentTimeoutMs).toISOString();
    const expired = await this.orders.findByStatus('COMMITTED', cutoff, limit);
    let released = 0;
    for (const order of expired) {
      try {
        const now = this.clock.now();
        const view = await this.release(order.orderId, 'PAYMENT_TIMEOUT', now, undefined, (history) =>
          this.timeoutContext(history, now),
        );
        if (view.status === 'RELEASED') released += 1;
      } catch (error) {
        // Paid in the meantime, or a concurrent change: the next scan looks again.
        if (!(error instanceof IllegalOrderTransition)) throw error;
        this.logger.info({ orderId: order.orderId }, 'order changed before its timeout release');
      }
    }
    return released;
  }

  /**
   * No request asks for a timeout: the release carries on the order's own conversation, caused by the
   * order's last event (the commit whose payment never came).
   */
  private timeoutContext(history: readonly StoredEvent[], now: string): EventContext {
    const first = history[0];
    const last = history.at(-1);
    return {
      occurredAt: now,
      correlationId: first?.correlationId ?? 'payment-timeout',
      causationId: last?.eventId ?? null,
    };
  }

  private async release(
    orderId: string,
    reason: ReleaseReason,
    now: string,
    requestedBy: string | undefined,
    context: EventContext | ((history: readonly StoredEvent[]) => EventContext),
  ): Promise<OrderView> {
    const { view, messages } = await retryOnConflict(() =>
      this.unitOfWork.run(async (stores) => {
        const decision = await this.commands.handle(stores.events, {
          command: {
            type: 'ReleaseReservation',
            orderId,
            reason,
            now,
            ...(requestedBy ? { requestedBy } : {}),
          },
          context,
        });
        for (const { event } of decision.envelopes)
          if (event.type === 'ReservationReleased' && event.data.stockWasCommitted)
            await stores.inventory.increment(event.data.productId, event.data.quantity);
        const outbound = messagesOf(decision.envelopes);
        const [row] = orderRows([decision]);
        await Promise.all([
          row ? stores.orders.upsert(row) : Promise.resolve(),
          stores.outbox.addMany(outbound, now),
        ]);
        return { view: row ?? (await stores.orders.get(orderId)), messages: outbound };
      }),
    );
    this.dispatcher.dispatchSoon(messages);
    if (!view) throw new OrderNotFound(orderId);
    return view;
  }
}
