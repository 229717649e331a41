import type { EventStore, StoredEvent } from '../../src/application/index.js';
import type { DomainEvent } from '../../src/domain/index.js';

/**
 * A flash sale's history made up on the fly, in global order, for reading back a page at a time: one
 * product with `stock` units and a limit of one; `orders` buyers each reserve one unit; the first `stock`
 * reservations are committed and then paid (even) or released by the payment timeout (odd), the rest are
 * released as sold out. Decisions trail reservations by `window` orders, as a consumer's lag would.
 * It keeps nothing but a cursor, so what a reader's heap holds is the reader's own.
 */
export class SyntheticHistory implements Pick<EventStore, 'readAll'> {
  readonly total: number;
  private cursor: Generator<StoredEvent> | null = null;
  private at = 0;

  constructor(
    private readonly plan: Readonly<{ orders: number; stock: number; window: number }>,
    /** told each page's last position, as it is handed out */
    private readonly onPage: (position: number) => void = () => undefined,
  ) {
    this.total = 1 + 2 * plan.orders + plan.stock;
  }

  /** The number of orders that makes a history of at least `events` events. */
  static ordersFor(events: number, stock: number): number {
    return Math.max(stock, Math.ceil((events - 1 - stock) / 2));
  }

  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
    if (!this.cursor || afterPosition !== this.at) {
      this.cursor = this.events();
      this.at = 0;
      while (this.at < afterPosition && !this.cursor.next().done) this.at += 1;
    }
    const page: StoredEvent[] = [];
    while (page.length < limit) {
      const next = this.cursor.next();
      if (next.done) break;
      page.push(next.value);
    }
    this.at += page.length;
    if (page.length > 0) this.onPage(this.at);
    return Promise.resolve(page);
  }

  private *events(): Generator<StoredEvent> {
    const { orders, stock, window } = this.plan;
    const productId = 1;
    const at = new Date(Date.UTC(2026, 11, 3, 10)).toISOString();
    let position = 0;
    const stored = (streamId: string, streamVersion: number, event: DomainEvent): StoredEvent => ({
      position: ++position,
      eventId: `event-${position}`,
      schemaVersion: 1,
      occurredAt: at,
      correlationId: streamId,
      causationId: null,
      streamId,
      streamVersion,
      event,
    });
    yield stored(`product-${productId}`, 1, {
      type: 'ProductListed',
      data: {
        productId,
        name: 'Synthetic',
        stock,
        perUserLimit: 1,
        maxPerOrder: 1,
        saleStartsAt: null,
        requirePathToken: false,
        saleEndsAt: null,
        listedAt: at,
      },
    });
    for (let k = 0; k < orders + window; k += 1) {
      if (k < orders) {
        const orderId = `order-${k}`;
        const data = { orderId, productId, userId: `buyer-${k}`, quantity: 1, reservedAt: at };
        yield stored(`order-${orderId}`, 1, { type: 'OrderReserved', data });
      }
      const d = k - window;
      if (d < 0) continue;
      const orderId = `order-${d}`;
      const userId = `buyer-${d}`;
      const streamId = `order-${orderId}`;
      const released = (reason: 'SOLD_OUT' | 'PAYMENT_TIMEOUT', stockWasCommitted: boolean): DomainEvent => ({
        type: 'ReservationReleased',
        data: { orderId, productId, userId, quantity: 1, reason, stockWasCommitted, releasedAt: at },
      });
      if (d >= stock) {
        yield stored(streamId, 2, released('SOLD_OUT', false));
        continue;
      }
      yield stored(streamId, 2, {
        type: 'StockCommitted',
        data: { orderId, productId, quantity: 1, committedAt: at },
      });
      yield d % 2 === 0
        ? stored(streamId, 3, { type: 'OrderPaid', data: { orderId, paidAt: at } })
        : stored(streamId, 3, released('PAYMENT_TIMEOUT', true));
    }
  }
}
