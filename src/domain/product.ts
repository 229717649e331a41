import type { Decider } from './decider.js';
import { InvalidProductTerms, ProductAlreadyListed, ProductNotListed } from './errors.js';
import { assertNever, type ProductEvent } from './events.js';

export type ProductTerms = Readonly<{
  productId: number;
  name: string;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
  /** orders must carry a single-use sale path token, issued to the buyer once the sale is open */
  requirePathToken: boolean;
}>;

/**
 * The most stock a product may ever have been given (listed plus restocked): MySQL keeps stock in an INT, and
 * a sum past it would fail there, after the gate had already opened the units.
 */
export const MAX_STOCK = 2_147_483_647;

/** Stock as the product stream knows it: listed plus restocked, plus what reconciliation recorded. */
export type ProductState =
  | Readonly<{ status: 'UNLISTED' }>
  | (ProductTerms & Readonly<{ status: 'LISTED'; listedStock: number; addedStock: number }>);

export const initialProductState: ProductState = { status: 'UNLISTED' };

export type ListProduct = Readonly<{
  type: 'ListProduct';
  productId: number;
  name: string;
  stock: number;
  perUserLimit: number;
  maxPerOrder: number;
  saleStartsAt: string | null;
  saleEndsAt: string | null;
  requirePathToken: boolean;
  now: string;
}>;
export type AddStock = Readonly<{ type: 'AddStock'; productId: number; quantity: number; now: string }>;
export type RecordReconciliation = Readonly<{
  type: 'RecordReconciliation';
  productId: number;
  gateBefore: number | null;
  gateAfter: number;
  mysqlStock: number;
  inFlight: number;
  now: string;
}>;
export type ProductCommand = ListProduct | AddStock | RecordReconciliation;

export const evolveProduct = (state: ProductState, event: ProductEvent): ProductState => {
  switch (event.type) {
    case 'ProductListed': {
      const { stock, listedAt: _listedAt, ...terms } = event.data;
      return { status: 'LISTED', ...terms, listedStock: stock, addedStock: 0 };
    }
    case 'StockAdded':
      if (state.status !== 'LISTED') return state;
      return { ...state, addedStock: state.addedStock + event.data.quantity };
    case 'StockReconciled':
      return state;
    default:
      return assertNever(event);
  }
};

const isWholeAtLeast = (value: number, min: number): boolean => Number.isSafeInteger(value) && value >= min;

const validateTerms = (cmd: ListProduct): void => {
  if (cmd.name.trim().length === 0) throw new InvalidProductTerms('name', 'name must not be blank');
  if (!isWholeAtLeast(cmd.stock, 0) || cmd.stock > MAX_STOCK)
    throw new InvalidProductTerms('stock', `stock must be a whole number between 0 and ${MAX_STOCK}`);
  if (!isWholeAtLeast(cmd.perUserLimit, 1))
    throw new InvalidProductTerms('perUserLimit', 'perUserLimit must be a whole number ≥ 1');
  if (!isWholeAtLeast(cmd.maxPerOrder, 1) || cmd.maxPerOrder > cmd.perUserLimit)
    throw new InvalidProductTerms('maxPerOrder', 'maxPerOrder must be between 1 and perUserLimit');
  for (const field of ['saleStartsAt', 'saleEndsAt'] as const) {
    const value = cmd[field];
    if (value !== null && Number.isNaN(Date.parse(value)))
      throw new InvalidProductTerms(field, `${field} must be an ISO-8601 instant`);
  }
  if (
    cmd.saleStartsAt !== null &&
    cmd.saleEndsAt !== null &&
    Date.parse(cmd.saleStartsAt) >= Date.parse(cmd.saleEndsAt)
  )
    throw new InvalidProductTerms('saleEndsAt', 'saleEndsAt must be after saleStartsAt');
};

export const decideProduct = (cmd: ProductCommand, state: ProductState): ProductEvent[] => {
  switch (cmd.type) {
    case 'ListProduct': {
      if (state.status === 'LISTED') throw new ProductAlreadyListed(cmd.productId);
      validateTerms(cmd);
      const { type: _type, now, ...data } = cmd;
      return [{ type: 'ProductListed', data: { ...data, listedAt: now } }];
    }
    case 'AddStock':
      if (state.status !== 'LISTED') throw new ProductNotListed(cmd.productId);
      if (!isWholeAtLeast(cmd.quantity, 1))
        throw new InvalidProductTerms('quantity', 'quantity must be a whole number ≥ 1');
      if (state.listedStock + state.addedStock + cmd.quantity > MAX_STOCK)
        throw new InvalidProductTerms(
          'quantity',
          `the product would have been given more than ${MAX_STOCK} units in all (${state.listedStock + state.addedStock} so far)`,
        );
      return [
        { type: 'StockAdded', data: { productId: cmd.productId, quantity: cmd.quantity, addedAt: cmd.now } },
      ];
    case 'RecordReconciliation': {
      if (state.status !== 'LISTED') throw new ProductNotListed(cmd.productId);
      if (cmd.gateBefore === cmd.gateAfter) return [];
      const { type: _type, now, ...data } = cmd;
      return [{ type: 'StockReconciled', data: { ...data, reconciledAt: now } }];
    }
    default:
      return assertNever(cmd);
  }
};

/** The product aggregate. */
export const productDecider: Decider<ProductCommand, ProductEvent, ProductState> = {
  decide: decideProduct,
  evolve: evolveProduct,
  initialState: initialProductState,
};

/** Terms a listing may leave out: one unit per buyer, and an order may take the whole allowance. */
export const withDefaultLimits = <
  T extends { perUserLimit?: number | undefined; maxPerOrder?: number | undefined },
>(
  terms: T,
): Omit<T, 'perUserLimit' | 'maxPerOrder'> & { perUserLimit: number; maxPerOrder: number } => {
  const perUserLimit = terms.perUserLimit ?? 1;
  return { ...terms, perUserLimit, maxPerOrder: terms.maxPerOrder ?? perUserLimit };
};
