import type { Clock, OrderReadModel, OrderView, StreamTicket, StreamTickets } from '../ports/index.js';

export type WatchOptions = Readonly<{
  /** how often the projection is read for every order watched in this process */
  pollMs: number;
  /** a watch ends after this long (the client may watch again) */
  maxMs: number;
  /** once the order is committed, its watch stays open this long for what follows (a payment), then ends */
  graceMs: number;
  /** watches one buyer holds open at once in this process */
  perBuyerMax: number;
  /** watches this process holds open at once */
  processMax: number;
  /** how long a ticket to open a stream from a browser is good for */
  ticketTtlMs: number;
}>;

/** Why a watch was not opened, and when to try again. */
export type WatchRefusal = Readonly<{ refused: 'BUYER' | 'PROCESS'; retryAfterMs: number }>;

/** An open watch: the order's changes as they come, until it ends or is closed. */
export type Watch = Readonly<{ changes: AsyncIterable<OrderView>; close: () => void }>;

type Watcher = {
  readonly buyer: string;
  readonly orderId: string;
  last: OrderView;
  endsAt: number;
  readonly queue: OrderView[];
  wake: (() => void) | null;
  done: boolean;
};

/** Orders read in one query of the projection. */
const READ_BATCH = 2_000;
/** When a refused watcher may try again: a watch of a committed order ends within its grace. */
const RETRY_AFTER_MS = 5_000;

const isFinal = (view: OrderView): boolean => view.status === 'PAID' || view.status === 'RELEASED';

/**
 * Buyers watch their orders decide instead of polling them. One poller per process reads the `orders`
 * projection for every order watched, a batch of orders per query, however many watches are open: the reads a
 * process makes per second grow with the orders watched divided by the batch, never with the watches. It reads
 * the shared projection, so a watch works on any API replica, whichever one took the order and whichever worker
 * decided it. Bounded: a few watches per buyer and a bound per process, each ending once its order is paid or
 * released, a grace after it is committed, or at its lifetime.
 */
export class WatchOrder {
  private readonly watchers = new Set<Watcher>();
  private readonly perBuyer = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private reads = 0;

  constructor(
    private readonly orders: Pick<OrderReadModel, 'getMany'>,
    private readonly tickets: StreamTickets,
    private readonly clock: Clock,
    private readonly options: WatchOptions,
  ) {}

  /** watches open now */
  get open(): number {
    return this.watchers.size;
  }

  /** queries of the projection made so far */
  get readsMade(): number {
    return this.reads;
  }

  /**
   * A ticket for a browser's `EventSource`, which sends no Authorization header: good once, for this order,
   * for `ticketTtlMs`. `order` is the order as its buyer reads it (from `Queries.order`).
   */
  ticket(buyer: string, order: OrderView): Promise<StreamTicket> {
    return this.tickets.issue(buyer, order.orderId, this.options.ticketTtlMs);
  }

  /** The buyer a ticket was issued to, for this order; null for a ticket unknown, used, expired or another order's. */
  redeem(ticket: string, orderId: string): Promise<string | null> {
    return this.tickets.redeem(ticket, orderId);
  }

  /**
   * Opens a watch of an order as its buyer reads it now (`from`, from `Queries.order`, which answers anybody
   * else as if it did not exist): each change after it, until the watch ends or is closed.
   */
  watch(buyer: string, from: OrderView): Watch | WatchRefusal {
    if (this.watchers.size >= this.options.processMax)
      return { refused: 'PROCESS', retryAfterMs: RETRY_AFTER_MS };
    const held = this.perBuyer.get(buyer) ?? 0;
    if (held >= this.options.perBuyerMax) return { refused: 'BUYER', retryAfterMs: RETRY_AFTER_MS };
    const now = this.nowMs();
    const watcher: Watcher = {
      buyer,
      orderId: from.orderId,
      last: from,
      endsAt: now + this.options.maxMs,
      queue: [],
      wake: null,
      done: false,
    };
    this.perBuyer.set(buyer, held + 1);
    this.watchers.add(watcher);
    if (isFinal(from)) this.finish(watcher);
    else if (from.status === 'COMMITTED')
      watcher.endsAt = Math.min(watcher.endsAt, now + this.options.graceMs);
    this.schedule();
    return { changes: this.changes(watcher), close: () => this.finish(watcher) };
  }

  private async *changes(watcher: Watcher): AsyncGenerator<OrderView> {
    try {
      for (;;) {
        while (watcher.queue.length > 0) yield watcher.queue.shift()!;
        if (watcher.done) return;
        await new Promise<void>((resolve) => (watcher.wake = resolve));
        watcher.wake = null;
      }
    } finally {
      this.finish(watcher);
    }
  }

  private finish(watcher: Watcher): void {
    if (watcher.done) return;
    watcher.done = true;
    this.watchers.delete(watcher);
    const held = (this.perBuyer.get(watcher.buyer) ?? 1) - 1;
    if (held > 0) this.perBuyer.set(watcher.buyer, held);
    else this.perBuyer.delete(watcher.buyer);
    watcher.wake?.();
  }

  private schedule(): void {
    if (this.timer || this.watchers.size === 0) return;
    this.timer = setTimeout(() => void this.tick(), this.options.pollMs);
    // the poller never keeps a process alive that has nothing else to do
    this.timer.unref();
  }

  /** One round: every watched order read, a batch at a time; what changed sent; what is over ended. */
  private async tick(): Promise<void> {
    try {
      const now = this.nowMs();
      const byOrder = new Map<string, Watcher[]>();
      for (const watcher of this.watchers) {
        if (now >= watcher.endsAt) {
          this.finish(watcher);
          continue;
        }
        const list = byOrder.get(watcher.orderId);
        if (list) list.push(watcher);
        else byOrder.set(watcher.orderId, [watcher]);
      }
      const orderIds = [...byOrder.keys()];
      for (let i = 0; i < orderIds.length; i += READ_BATCH) {
        this.reads += 1;
        const views = await this.orders.getMany(orderIds.slice(i, i + READ_BATCH)).catch(() => null);
        // a failed read is tried again at the next round
        for (const [orderId, view] of views ?? [])
          for (const watcher of byOrder.get(orderId) ?? []) this.deliver(watcher, view);
      }
    } finally {
      this.timer = null;
      this.schedule();
    }
  }

  private deliver(watcher: Watcher, view: OrderView): void {
    if (watcher.done) return;
    if (view.status === watcher.last.status && view.updatedAt === watcher.last.updatedAt) return;
    watcher.last = view;
    watcher.queue.push(view);
    if (isFinal(view)) this.finish(watcher);
    else if (view.status === 'COMMITTED')
      watcher.endsAt = Math.min(watcher.endsAt, this.nowMs() + this.options.graceMs);
    watcher.wake?.();
  }

  private nowMs(): number {
    return Date.parse(this.clock.now());
  }
}
