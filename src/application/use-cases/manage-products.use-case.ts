import {
  decideProduct,
  evolveProduct,
  initialProductState,
  isProductEvent,
  ProductNotListed,
  productStreamId,
} from '../../domain/index.js';
import type { ProductCatalog } from '../product-catalog.js';
import type { Clock, Logger, ProductRecord, SoldOutFlags, StockGate, UnitOfWork } from '../ports/index.js';

export type ListProductInput = Readonly<{
  name: string;
  stock: number;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
}>;

export type ProductAnswer = ProductRecord & Readonly<{ gate: 'WARMED' | 'ALREADY_LIVE' | 'NOT_LOADED' }>;

/** Lists products and restocks them: MySQL and the product stream in one transaction, then the gate. */
export class ManageProducts {
  constructor(
    private readonly deps: Readonly<{
      unitOfWork: UnitOfWork;
      gate: StockGate;
      soldOut: SoldOutFlags;
      catalog: ProductCatalog;
      clock: Clock;
      logger: Logger;
    }>,
  ) {}

  async list(input: ListProductInput, correlationId: string): Promise<ProductAnswer> {
    const now = this.deps.clock.now();
    const product = await this.deps.unitOfWork.run(async (stores) => {
      const created = await stores.inventory.create(input);
      const events = decideProduct(
        { type: 'ListProduct', productId: created.productId, ...input, now },
        initialProductState,
      );
      await stores.events.append(productStreamId(created.productId), events, 0, { correlationId });
      return created;
    });
    // the order path may remember this id as unknown from before it was listed
    this.deps.catalog.forget(product.productId);
    return { ...product, gate: await this.warm(product.productId, product.stock) };
  }

  async restock(productId: number, quantity: number, correlationId: string): Promise<ProductAnswer> {
    const now = this.deps.clock.now();
    const product = await this.deps.unitOfWork.run(async (stores) => {
      const stream = productStreamId(productId);
      const { events, version } = await stores.events.read(stream);
      const state = events.filter(isProductEvent).reduce(evolveProduct, initialProductState);
      const added = decideProduct({ type: 'AddStock', productId, quantity, now }, state);
      await stores.inventory.increment(productId, quantity);
      await stores.events.append(stream, added, version, { correlationId });
      const record = await stores.inventory.get(productId);
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
