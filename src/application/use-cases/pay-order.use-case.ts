import { OrderNotFound } from '../../domain/index.js';
import { type OrderCommands, orderRows } from '../order-stream.js';
import type { Clock, OrderView } from '../ports/index.js';

/** Marks a committed order paid. Paying twice is one payment; paying a reservation MySQL has not committed is refused. */
export class PayOrder {
  constructor(
    private readonly orders: OrderCommands,
    private readonly clock: Clock,
  ) {}

  /** Only the owner pays: the decider answers anybody else as if the order did not exist. */
  async execute(userId: string, orderId: string, correlationId: string): Promise<OrderView> {
    const now = this.clock.now();
    return this.orders.write(async (tx) => {
      const decision = await tx.decideOne({
        command: { type: 'PayOrder', orderId, now, requestedBy: userId },
        context: { occurredAt: now, correlationId, causationId: correlationId, userId },
      });
      // the row the handler writes, or (paid already) the row as it is
      const view = orderRows([decision])[0] ?? (await tx.stores.orders.get(orderId));
      if (!view) throw new OrderNotFound(orderId);
      return view;
    });
  }
}
