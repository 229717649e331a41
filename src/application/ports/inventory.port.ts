export type ProductRecord = Readonly<{
  productId: number;
  name: string;
  stock: number;
  version: number;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
  /** orders must carry a sale path token */
  requirePathToken: boolean;
}>;

/** A listing may leave the path token out: orders then need none. */
export type NewProduct = Omit<ProductRecord, 'productId' | 'version' | 'requirePathToken'> &
  Readonly<{ requirePathToken?: boolean | undefined }>;

/** MySQL's view of stock: it has the final word on what is sold. */
export interface Inventory {
  create(product: NewProduct): Promise<ProductRecord>;
  get(productId: number): Promise<ProductRecord | null>;
  list(): Promise<ProductRecord[]>;
  /** `stock = stock - q WHERE id = ? AND stock >= q`; true when the row took it. */
  tryDecrement(productId: number, quantity: number): Promise<boolean>;
  /**
   * One conditional decrement for the sum of several orders of one product; when the sum does not fit,
   * one by one in the given order. Returns, per quantity, whether it was taken.
   */
  decrementMany(productId: number, quantities: readonly number[]): Promise<boolean[]>;
  /** Returns stock: a release, or a restock. */
  increment(productId: number, quantity: number): Promise<void>;
}
