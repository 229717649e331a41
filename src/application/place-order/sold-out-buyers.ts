import type { Logger, StockGate } from '../ports/index.js';

/** The most reservations of a product whose buyers are kept in process while it is sold out. */
export const SOLD_OUT_BUYERS_MAX = 20_000;
/** The most products whose buyers are kept at once. */
const PRODUCTS_KEPT = 64;

/**
 * Who has reserved a sold-out product, kept in process, so that the flood with an Idempotency-Key is turned
 * away here as the flood without one is: a keyed request goes on to the gate only when its buyer has reserved
 * the product (its key may hold a reservation whose 202 was lost). The list is asked of the gate each time
 * this process marks the product sold out, and forgotten meanwhile (every request may then go on), so it
 * never misses a buyer who reserved while the product had stock. A product with more reservations than `max`
 * is not listed: every keyed request goes on to the gate.
 */
export class SoldOutBuyers {
  /** null: too many to list */
  private readonly buyers = new Map<number, ReadonlySet<string> | null>();
  private readonly loading = new Map<number, { again: boolean }>();

  constructor(
    private readonly gate: Pick<StockGate, 'reservedBy'>,
    private readonly logger: Logger,
    private readonly max = SOLD_OUT_BUYERS_MAX,
  ) {}

  /** The product was just marked sold out: its buyers are asked of the gate again. */
  refresh(productId: number): void {
    this.buyers.delete(productId);
    const running = this.loading.get(productId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.loading.set(productId, state);
    void this.load(productId, state);
  }

  /** False only when the buyer surely never reserved the product. */
  mayHold(productId: number, userId: string): boolean {
    const buyers = this.buyers.get(productId);
    return buyers === undefined || buyers === null || buyers.has(userId);
  }

  private async load(productId: number, state: { again: boolean }): Promise<void> {
    try {
      for (;;) {
        state.again = false;
        const buyers = await this.gate.reservedBy(productId, this.max);
        if (state.again) continue;
        if (this.buyers.size >= PRODUCTS_KEPT) this.buyers.delete(this.buyers.keys().next().value!);
        this.buyers.set(productId, buyers);
        return;
      }
    } catch (error) {
      // nothing is kept: keyed requests go on to the gate until the next refresh
      this.logger.warn(
        { productId, err: String(error) },
        'the buyers of a sold-out product could not be read',
      );
    } finally {
      this.loading.delete(productId);
    }
  }
}
