import { OrderNotFound } from '../../domain/index.js';
import { retryOnConflict } from '../command-handler.js';
import { type OrderCommands, orderCommands, orderRows } from '../order-stream.js';
import type { Clock, IdGenerator, OrderView, UnitOfWork } from '../ports/index.js';

/** Marks a committed order paid. Paying twice is one payment; paying a reservation MySQL has not committed is refused. */
export class PayOrder {
  private readonly orders: OrderCommands;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    ids: IdGenerator,
  ) {
    this.orders = orderCommands(ids);
  }

  /** Only the owner pays: the decider answers anybody else as if the order did not exist. */
  async execute(userId: string, orderId: string, correlationId: string): Promise<OrderView> {
    const now = this.clock.now();
    return retryOnConflict(() =>
      this.unitOfWork.run(async (stores) => {
        const decision = await this.orders.handle(stores.events, {
          command: { type: 'PayOrder', orderId, now, requestedBy: userId },
          context: { occurredAt: now, correlationId, causationId: correlationId, userId },
        });
        const [row] = orderRows([decision]);
        if (row) await stores.orders.upsert(row);
        const view = row ?? (await stores.orders.get(orderId));
        if (!view) throw new OrderNotFound(orderId);
        return view;
      }),
    );
  }
}
