import type { ProductTerms } from '../domain/index.js';
import type { Clock, Inventory } from './ports/index.js';

type Entry = { terms: ProductTerms | null; expiresAt: number };

/** How many products, and how many unknown ids, one process keeps at most. */
export const CATALOG_MAX_ENTRIES = 10_000;

/**
 * Entries kept until they expire, at most `max` of them: each one put drops the expired entries before it, and
 * a full map the entry that went in first.
 */
class BoundedEntries {
  private readonly entries = new Map<number, Entry>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  fresh(productId: number, now: number): Entry | undefined {
    const entry = this.entries.get(productId);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry;
    this.entries.delete(productId);
    return undefined;
  }

  put(productId: number, entry: Entry, now: number): void {
    this.entries.delete(productId);
    // entries go in in the order they expire (one age for all): the expired ones are at the front
    for (const [id, kept] of this.entries) {
      if (kept.expiresAt > now && this.entries.size < this.max) break;
      this.entries.delete(id);
    }
    this.entries.set(productId, entry);
  }

  delete(productId: number): void {
    this.entries.delete(productId);
  }
}

/**
 * A product's terms (window, limits) barely change, so the order path keeps them in process for a short
 * while instead of asking MySQL on every request. Unknown products are remembered too, so that a flood on
 * a wrong id does not reach the database; they are kept apart from the products, so that a flood of unknown
 * ids never pushes a product out. Both are bounded in age (`ttlMs`) and in number (`maxEntries` each).
 */
export class ProductCatalog {
  private readonly known: BoundedEntries;
  private readonly unknown: BoundedEntries;
  private readonly loading = new Map<number, Promise<ProductTerms | null>>();

  constructor(
    private readonly inventory: Inventory,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    maxEntries = CATALOG_MAX_ENTRIES,
  ) {
    this.known = new BoundedEntries(maxEntries);
    this.unknown = new BoundedEntries(maxEntries);
  }

  /** entries kept: products, and ids found unknown */
  get size(): Readonly<{ known: number; unknown: number }> {
    return { known: this.known.size, unknown: this.unknown.size };
  }

  /** The terms kept in process, without waiting: undefined when they are not kept (or no longer fresh). */
  cached(productId: number, now = Date.parse(this.clock.now())): ProductTerms | null | undefined {
    const entry = this.known.fresh(productId, now) ?? this.unknown.fresh(productId, now);
    return entry?.terms;
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
    this.known.delete(productId);
    this.unknown.delete(productId);
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
    const entry = { terms, expiresAt: now + this.ttlMs };
    if (terms) {
      this.unknown.delete(productId);
      this.known.put(productId, entry, now);
    } else {
      this.known.delete(productId);
      this.unknown.put(productId, entry, now);
    }
    return terms;
  }
}
