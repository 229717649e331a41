/**
 * In-process sold-out marks that lapse. A mark whose "stock back" message was missed (a dropped pub/sub
 * connection, an instance restarting its subscriber) would otherwise refuse buyers forever while the gate
 * has units again. When a mark has lapsed, one order goes to the gate to look, and the flood behind it is
 * still refused for a short probe window: the gate marks the product again if it is still sold out, and an
 * order the gate accepts clears the mark. One gate call per product per interval and instance is the price,
 * not a burst of every request in flight at that moment.
 */
export class SoldOutMarks {
  private readonly until = new Map<number, number>();
  private readonly probeMs: number;

  constructor(
    private readonly ttlMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.probeMs = Math.max(1, Math.ceil(ttlMs / 4));
  }

  has(productId: number): boolean {
    const until = this.until.get(productId);
    if (until === undefined) return false;
    const now = this.nowMs();
    if (until > now) return true;
    // lapsed: this caller looks at the gate; the others wait for its answer (or for the probe window to pass)
    this.until.set(productId, now + this.probeMs);
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
