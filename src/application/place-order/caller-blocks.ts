/** How many callers may be blocked in one process at once: past it the oldest block goes first. */
export const MAX_CALLER_BLOCKS = 10_000;

/**
 * Callers (a buyer, a client address, on a product) whose budget the gate found used up, blocked in this process
 * until their window ends: a bot's flood then costs no further Redis call here. Bounded: at most `max` blocks
 * are kept, the oldest dropped first (such a caller only costs a gate call again).
 */
export class CallerBlocks {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly max = MAX_CALLER_BLOCKS,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The ms left of the caller's block, or 0. */
  blockedFor(caller: string): number {
    const until = this.until.get(caller);
    if (until === undefined) return 0;
    const left = until - this.nowMs();
    if (left > 0) return left;
    this.until.delete(caller);
    return 0;
  }

  block(caller: string, ms: number): void {
    this.until.delete(caller);
    if (this.until.size >= this.max) this.makeRoom();
    this.until.set(caller, this.nowMs() + ms);
  }

  get size(): number {
    return this.until.size;
  }

  /** Drops the blocks that have ended; if none had, the oldest. */
  private makeRoom(): void {
    const now = this.nowMs();
    for (const [caller, until] of this.until) if (until <= now) this.until.delete(caller);
    if (this.until.size < this.max) return;
    const oldest = this.until.keys().next();
    if (!oldest.done) this.until.delete(oldest.value);
  }
}
