import { saleWindowRejection } from '../../domain/index.js';
import type { ProductCatalog } from '../product-catalog.js';
import type { Clock, SalePathGrant, SalePaths } from '../ports/index.js';

export type IssueSalePathResult =
  | Readonly<{ ok: true; grant: SalePathGrant }>
  | Readonly<{ ok: false; code: 'PRODUCT_NOT_FOUND' | 'SALE_NOT_ACTIVE'; detail: string }>;

/**
 * The sale path: a buyer asks for a single-use token for a product once its sale window is open, and a
 * product that requires one takes the order only with it. A script cannot prepare its orders before the
 * sale opens, and each order costs it a round trip bound to one account.
 */
export class IssueSalePath {
  constructor(
    private readonly deps: Readonly<{
      catalog: ProductCatalog;
      salePaths: SalePaths;
      clock: Clock;
      /** how long a token may wait before the order that uses it */
      ttlMs: number;
    }>,
  ) {}

  async execute(userId: string, productId: number): Promise<IssueSalePathResult> {
    const terms = await this.deps.catalog.terms(productId);
    if (!terms)
      return { ok: false, code: 'PRODUCT_NOT_FOUND', detail: `product ${productId} does not exist` };
    const closed = saleWindowRejection(terms, this.deps.clock.now());
    if (closed) return { ok: false, code: 'SALE_NOT_ACTIVE', detail: closed.detail };
    return { ok: true, grant: await this.deps.salePaths.issue(userId, productId, this.deps.ttlMs) };
  }
}
