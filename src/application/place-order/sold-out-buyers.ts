import type { Logger, StockGate } from '../ports/index.js';

/** The most reservations of a product whose buyers are kept in process while it is sold out. */
export const SOLD_OUT_BUYERS_MAX = 20_000;
/** How long a list of buyers is trusted without a newer one (a sold-out mark is looked at again every 2 s). */
const TRUSTED_MS = 5_000;
/** The most products whose buyers are kept at once. */
const PRODUCTS_KEPT = 64;

type Listed = Readonly<{ buyers: Set<string> | null; readAtMs: number }>;

/**
 * Who has reserved a sold-out product, kept in process, so that the flood with an Idempotency-Key is turned
 * away here as the flood without one is: a keyed request goes on to the gate only when its buyer has reserved
 * the product (its key may hold a reservation whose 202 was lost). The list is read from the gate each time
 * this process marks the product sold out (the first time, and each time the lapsed mark is looked at again),
 * and the one before is used meanwhile; a list older than a few seconds is not trusted, and neither is one of
 * more than `max` reservations (not read): then every keyed request goes on to the gate.
 */
export class SoldOutBuyers {
  private readonly listed = new Map<number, Listed>();
  private readonly loading = new Map<number, { again: boolean }>();

  constructor(
    private readonly gate: Pick<StockGate, 'reservedBy'>,
    private readonly logger: Logger,
    private readonly max = SOLD_OUT_BUYERS_MAX,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The product was just marked sold out: who reserved it is read from the gate again. */
  refresh(productId: number): void {
    const running = this.loading.get(productId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.loading.set(productId, state);
    void this.load(productId, state);
  }

  /** This process has just reserved the product for a buyer. */
  reserved(productId: number, userId: string): void {
    this.listed.get(productId)?.buyers?.add(userId);
  }

  /** False only when the buyer surely never reserved the product. */
  mayHold(productId: number, userId: string): boolean {
    const listed = this.listed.get(productId);
    if (!listed?.buyers || this.nowMs() - listed.readAtMs > TRUSTED_MS) return true;
    return listed.buyers.has(userId);
  }

  private async load(productId: number, state: { again: boolean }): Promise<void> {
    try {
      for (;;) {
        state.again = false;
        const readAtMs = this.nowMs();
        const buyers = await this.gate.reservedBy(productId, this.max);
        this.keep(productId, { buyers: buyers && new Set(buyers), readAtMs });
        if (!state.again) return;
      }
    } catch (error) {
      // the list before stays until it is no longer trusted: keyed requests then go on to the gate
      this.logger.warn(
        { productId, err: String(error) },
        'the buyers of a sold-out product could not be read',
      );
    } finally {
      this.loading.delete(productId);
    }
  }

  private keep(productId: number, listed: Listed): void {
    this.listed.delete(productId);
    if (this.listed.size >= PRODUCTS_KEPT) this.listed.delete(this.listed.keys().next().value!);
    this.listed.set(productId, listed);
  }
}
