import { OrderNotFound } from '../../domain/index.js';
import { handleOrderCommand, loadOrder, toView } from '../order-stream.js';
import type { Clock, OrderView, UnitOfWork } from '../ports/index.js';

/** Marks a committed order paid. Paying twice is one payment; paying a reservation MySQL has not committed is refused. */
export class PayOrder {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async execute(userId: string, orderId: string, correlationId: string): Promise<OrderView> {
    const now = this.clock.now();
    return this.unitOfWork.run(async (stores) => {
      const loaded = await loadOrder(stores, orderId);
      if (loaded.state.status === 'NONE' || loaded.state.userId !== userId) throw new OrderNotFound(orderId);
      const { state } = await handleOrderCommand(
        stores,
        { type: 'PayOrder', orderId, now },
        { correlationId, userId },
      );
      const view = toView(state, now);
      if (!view) throw new OrderNotFound(orderId);
      return view;
    });
  }
}
