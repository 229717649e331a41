import { ProductNotListed } from '../../domain/index.js';
import type { EventContext } from '../command-handler.js';
import type { ProductCommands } from '../order-stream.js';
import type { ProductCatalog } from '../product-catalog.js';
import type { Clock, Logger, ProductRecord, SoldOutFlags, StockGate } from '../ports/index.js';

export type ListProductInput = Readonly<{
  name: string;
  stock: number;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
  /** absent: orders need no sale path token */
  requirePathToken?: boolean | undefined;
}>;

export type ProductAnswer = ProductRecord & Readonly<{ gate: 'WARMED' | 'ALREADY_LIVE' | 'NOT_LOADED' }>;

/** Lists products and restocks them: MySQL and the product stream in one transaction, then the gate. */
export class ManageProducts {
  constructor(
    private readonly deps: Readonly<{
      products: ProductCommands;
      gate: StockGate;
      soldOut: SoldOutFlags;
      catalog: ProductCatalog;
      clock: Clock;
      logger: Logger;
    }>,
  ) {}

  async list(listing: ListProductInput, correlationId: string): Promise<ProductAnswer> {
    const input = { ...listing, requirePathToken: listing.requirePathToken ?? false };
    const now = this.deps.clock.now();
    const context: EventContext = { occurredAt: now, correlationId, causationId: correlationId };
    const product = await this.deps.products.write(async (tx) => {
      // the product row gives the id the stream is named after
      const created = await tx.stores.inventory.create(input);
      await tx.decideOne({
        command: { type: 'ListProduct', productId: created.productId, ...input, now },
        context,
        isNew: true,
      });
      return created;
    });
    // the order path may remember this id as unknown from before it was listed
    this.deps.catalog.forget(product.productId);
    return { ...product, gate: await this.warm(product.productId, product.stock) };
  }

  async restock(productId: number, quantity: number, correlationId: string): Promise<ProductAnswer> {
    const now = this.deps.clock.now();
    const context: EventContext = { occurredAt: now, correlationId, causationId: correlationId };
    const product = await this.deps.products.write(async (tx) => {
      await tx.decideOne({ command: { type: 'AddStock', productId, quantity, now }, context });
      await tx.stores.inventory.increment(productId, quantity);
      const record = await tx.stores.inventory.get(productId);
      if (!record) throw new ProductNotListed(productId);
      return record;
    });
    const gateStock = await this.deps.gate.adjust(productId, quantity).catch((error: unknown) => {
      this.deps.logger.error(
        { productId, err: String(error) },
        'restock not applied to the gate; reconciliation will',
      );
      return null;
    });
    if (gateStock !== null) await this.deps.soldOut.announceStockBack(productId);
    return { ...product, gate: gateStock === null ? 'NOT_LOADED' : 'ALREADY_LIVE' };
  }

  private async warm(productId: number, stock: number): Promise<ProductAnswer['gate']> {
    try {
      return await this.deps.gate.warm(productId, stock);
    } catch (error) {
      // The product is listed; the reconciliation job loads its gate from MySQL.
      this.deps.logger.error({ productId, err: String(error) }, 'gate warm-up failed');
      return 'NOT_LOADED';
    }
  }
}
