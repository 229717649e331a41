import type { Clock, OrderReadModel, OrderView } from '../ports/index.js';

export type WatchOptions = Readonly<{
  /** how often the projection is read */
  pollMs: number;
  /** a watch ends after this long (the client may watch again) */
  maxMs: number;
}>;

const isFinal = (view: OrderView): boolean => view.status === 'PAID' || view.status === 'RELEASED';

/**
 * A buyer watches their order decide instead of polling it: the status changes as the `orders` projection
 * records them. It reads the shared projection, so it works on any API replica, whichever one took the
 * order and whichever worker decided it. The watch starts from the order as its buyer reads it
 * (`Queries.order`, which answers anybody else as if it did not exist).
 */
export class WatchOrder {
  constructor(
    private readonly orders: OrderReadModel,
    private readonly clock: Clock,
    private readonly options: WatchOptions,
  ) {}

  /**
   * Each change after `from`, until the order is paid or released, the watcher leaves (`left`), or the
   * watch has lasted `maxMs`.
   */
  async *changes(from: OrderView, left: () => boolean): AsyncGenerator<OrderView> {
    const until = Date.parse(this.clock.now()) + this.options.maxMs;
    let last = from;
    while (!isFinal(last) && !left() && Date.parse(this.clock.now()) < until) {
      await this.clock.sleep(this.options.pollMs);
      if (left()) return;
      const view = await this.orders.get(from.orderId);
      if (view && (view.status !== last.status || view.updatedAt !== last.updatedAt)) {
        last = view;
        yield view;
      }
    }
  }
}
