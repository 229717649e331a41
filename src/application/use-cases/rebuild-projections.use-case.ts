import { isOrderEvent, type OrderEvent } from '../../domain/index.js';
import { projectOrderEvent } from '../order-stream.js';
import type {
  EventStore,
  OrderProjectionRebuild,
  OrderView,
  ProjectionComparison,
  StoredEvent,
} from '../ports/index.js';

export type RebuildReport = Readonly<{
  eventsRead: number;
  ordersWritten: number;
  /** the global position the rebuilt table is at */
  checkpoint: number;
  comparison: ProjectionComparison;
  swapped: boolean;
}>;

/**
 * Replays the event store, in global position order and a page at a time, through the same projection the
 * live service applies (`projectOrderEvent`), into fresh tables; then compares them with the live ones,
 * and on request puts them in their place. Each page's rows go in with the checkpoint, so `resume` picks
 * up after the last page written.
 */
export class RebuildProjections {
  constructor(
    private readonly deps: Readonly<{ events: EventStore; target: OrderProjectionRebuild; pageSize: number }>,
  ) {}

  async run(options: Readonly<{ resume?: boolean; swap?: boolean }> = {}): Promise<RebuildReport> {
    const { events, target, pageSize } = this.deps;
    if (!options.resume) await target.reset();
    let position = await target.checkpoint();
    let eventsRead = 0;
    let ordersWritten = 0;
    for (;;) {
      const page = await events.readAll(position, pageSize);
      if (page.length === 0) break;
      const rows = await this.project(page);
      position = page.at(-1)!.position;
      await target.commit(rows, position);
      eventsRead += page.length;
      ordersWritten += rows.length;
      if (page.length < pageSize) break;
    }
    const comparison = await target.compare();
    const swapped = options.swap === true;
    if (swapped) await target.swap();
    return { eventsRead, ordersWritten, checkpoint: position, comparison, swapped };
  }

  /** The rows a page of events changes, each folded from its row in the fresh table. */
  private async project(page: readonly StoredEvent[]): Promise<OrderView[]> {
    const orderEvents = page.filter((e): e is StoredEvent<OrderEvent> => isOrderEvent(e.event));
    const ids = [...new Set(orderEvents.map((e) => e.event.data.orderId))];
    const rows = ids.length > 0 ? await this.deps.target.rows(ids) : new Map<string, OrderView>();
    const changed = new Map<string, OrderView>();
    for (const stored of orderEvents) {
      const orderId = stored.event.data.orderId;
      const row = projectOrderEvent(changed.get(orderId) ?? rows.get(orderId) ?? null, stored);
      if (row) changed.set(orderId, row);
    }
    return [...changed.values()];
  }
}
