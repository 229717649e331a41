/**
 * An in-process "sold out" mark per product, so that the flood after the last unit never reaches Redis.
 * Marks are cleared on every instance when stock comes back.
 */
export interface SoldOutFlags {
  isSoldOut(productId: number): boolean;
  markSoldOut(productId: number): void;
  /** This instance saw the product take an order: its own mark goes (the others' lapse or hear "stock back"). */
  markAvailable(productId: number): void;
  /** Tells every instance that the product has stock again. */
  announceStockBack(productId: number): Promise<void>;
}
