/**
 * In-process sold-out marks that lapse. A mark whose "stock back" message was missed (a dropped pub/sub
 * connection, an instance restarting its subscriber) would otherwise refuse buyers forever while the gate
 * has units again: after `ttlMs` the next order goes to the gate, which marks the product again if it is
 * still sold out. One gate call per product per interval and instance is the price.
 */
export class SoldOutMarks {
  private readonly until = new Map<number, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  has(productId: number): boolean {
    const until = this.until.get(productId);
    if (until === undefined) return false;
    if (until > this.nowMs()) return true;
    this.until.delete(productId);
    return false;
  }

  add(productId: number): void {
    this.until.set(productId, this.nowMs() + this.ttlMs);
  }

  delete(productId: number): void {
    this.until.delete(productId);
  }
}

/** How long a sold-out mark holds before the gate is asked again. */
export type SoldOutMarkOptions = Readonly<{ ttlMs: number; nowMs?: () => number }>;

export const DEFAULT_SOLD_OUT_MARK: SoldOutMarkOptions = { ttlMs: 2_000 };
