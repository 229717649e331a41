import type { ProductTerms } from '../domain/index.js';
import type { Clock, Inventory } from './ports/index.js';

type Entry = { terms: ProductTerms | null; expiresAt: number };

/**
 * A product's terms (window, limits) barely change, so the order path keeps them in process for a short
 * while instead of asking MySQL on every request. Unknown products are remembered too, so that a flood on
 * a wrong id does not reach the database.
 */
export class ProductCatalog {
  private readonly entries = new Map<number, Entry>();
  private readonly loading = new Map<number, Promise<ProductTerms | null>>();

  constructor(
    private readonly inventory: Inventory,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** The terms kept in process, without waiting: undefined when they are not kept (or no longer fresh). */
  cached(productId: number, now = Date.parse(this.clock.now())): ProductTerms | null | undefined {
    const entry = this.entries.get(productId);
    return entry && entry.expiresAt > now ? entry.terms : undefined;
  }

  async terms(productId: number): Promise<ProductTerms | null> {
    const now = Date.parse(this.clock.now());
    const kept = this.cached(productId, now);
    if (kept !== undefined) return kept;
    const pending = this.loading.get(productId);
    if (pending) return pending;
    const load = this.load(productId, now).finally(() => this.loading.delete(productId));
    this.loading.set(productId, load);
    return load;
  }

  forget(productId: number): void {
    this.entries.delete(productId);
  }

  private async load(productId: number, now: number): Promise<ProductTerms | null> {
    const record = await this.inventory.get(productId);
    const terms: ProductTerms | null = record
      ? {
          productId: record.productId,
          name: record.name,
          perUserLimit: record.perUserLimit,
          maxPerOrder: record.maxPerOrder,
          saleStartsAt: record.saleStartsAt,
          saleEndsAt: record.saleEndsAt,
          requirePathToken: record.requirePathToken,
        }
      : null;
    this.entries.set(productId, { terms, expiresAt: now + this.ttlMs });
    return terms;
  }
}
