import { type ReleaseReason, IllegalOrderTransition, OrderNotFound } from '../../domain/index.js';
import type { EventContext } from '../command-handler.js';
import { type OrderCommands, orderRows } from '../order-stream.js';
import {
  type Clock,
  type Logger,
  NO_TRACING,
  type OrderReadModel,
  type OrderView,
  type StoredEvent,
  type Tracer,
} from '../ports/index.js';
import { Spans } from '../traced-messaging.js';

/**
 * Ends a reservation without a sale: by the buyer (CANCELLED) or by the payment timeout. Stock that MySQL had
 * committed goes back in the same transaction as the event; the gate gets its share through compensation.
 */
export class ReleaseOrder {
  constructor(
    private readonly commands: OrderCommands,
    private readonly orders: OrderReadModel,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly paymentTimeoutMs: number,
    private readonly tracer: Tracer = NO_TRACING,
  ) {}

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
      const startedAt = Date.now();
      let trace: string | undefined;
      let outcome = 'failed';
      try {
        const now = this.clock.now();
        const view = await this.release(order.orderId, 'PAYMENT_TIMEOUT', now, undefined, (history) => {
          const context = this.timeoutContext(history, now);
          trace = context.traceparent;
          return context;
        });
        outcome = view.status === 'RELEASED' ? 'released' : 'unchanged';
        if (view.status === 'RELEASED') released += 1;
      } catch (error) {
        // Paid in the meantime, or a concurrent change: the next scan looks again.
        if (!(error instanceof IllegalOrderTransition)) throw error;
        outcome = 'changed';
        this.logger.info({ orderId: order.orderId }, 'order changed before its timeout release');
      } finally {
        // the release in the buyer's trace, learned from the order's history as it was read: a failed one too
        this.tracer.record(Spans.RELEASE, trace, startedAt, {
          attributes: {
            'seckill.order_id': order.orderId,
            'seckill.release_reason': 'PAYMENT_TIMEOUT',
            'seckill.release_outcome': outcome,
          },
        });
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
    const traceparent = this.tracer.enabled ? (last?.traceparent ?? first?.traceparent) : undefined;
    return {
      occurredAt: now,
      correlationId: first?.correlationId ?? 'payment-timeout',
      causationId: last?.eventId ?? null,
      // the buyer's trace goes on: the gate's share back (compensation) is part of it
      ...(traceparent === undefined ? {} : { traceparent }),
    };
  }

  private async release(
    orderId: string,
    reason: ReleaseReason,
    now: string,
    requestedBy: string | undefined,
    context: EventContext | ((history: readonly StoredEvent[]) => EventContext),
  ): Promise<OrderView> {
    const view = await this.commands.write(async (tx) => {
      const decision = await tx.decideOne({
        command: {
          type: 'ReleaseReservation',
          orderId,
          reason,
          now,
          ...(requestedBy ? { requestedBy } : {}),
        },
        context,
      });
      // the product's stock is its row: a unit MySQL had committed goes back with the event
      for (const { event } of decision.envelopes)
        if (event.type === 'ReservationReleased' && event.data.stockWasCommitted)
          await tx.stores.inventory.increment(event.data.productId, event.data.quantity);
      return orderRows([decision])[0] ?? (await tx.stores.orders.get(orderId));
    });
    if (!view) throw new OrderNotFound(orderId);
    return view;
  }
}
