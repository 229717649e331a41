import { describe, expect, it } from '@jest/globals';
import {
  MAX_STOCK,
  decideProduct,
  evolveProduct,
  initialProductState,
  InvalidProductTerms,
  ProductAlreadyListed,
  ProductNotListed,
  type ListProduct,
  type ProductCommand,
  type ProductEvent,
  type ProductState,
  type RecordReconciliation,
} from '../../../src/domain/index.js';
import { deciderSpecification } from '../../support/decider.js';
import { productId, productListed, stockAdded, stockReconciled } from './builders.js';

const given = deciderSpecification<ProductCommand, ProductEvent, ProductState>({
  decide: decideProduct,
  evolve: evolveProduct,
  initialState: initialProductState,
});

const now = '2030-04-30T08:00:00.000Z';

const list = (terms: Partial<Omit<ListProduct, 'type' | 'productId' | 'now'>> = {}): ListProduct => ({
  type: 'ListProduct',
  productId,
  name: 'Mechanical keyboard',
  stock: 10,
  perUserLimit: 2,
  maxPerOrder: 2,
  saleStartsAt: '2030-05-01T09:00:00.000Z',
  saleEndsAt: '2030-05-01T12:00:00.000Z',
  requirePathToken: false,
  now,
  ...terms,
});

const reconcile = (gates: Pick<RecordReconciliation, 'gateBefore' | 'gateAfter'>): RecordReconciliation => ({
  type: 'RecordReconciliation',
  productId,
  mysqlStock: 6,
  inFlight: 2,
  now,
  ...gates,
});

describe('Product decider', () => {
  describe('ListProduct', () => {
    it('lists a product with its terms, stamped with the command time', () => {
      given([])
        .when(list())
        .then([productListed({ listedAt: now })]);
    });

    it('accepts an open sale window, no stock yet, and an order size equal to the user limit', () => {
      given([])
        .when(list({ saleStartsAt: null, saleEndsAt: null, stock: 0, perUserLimit: 3, maxPerOrder: 3 }))
        .then([
          productListed({
            saleStartsAt: null,
            saleEndsAt: null,
            stock: 0,
            perUserLimit: 3,
            maxPerOrder: 3,
            listedAt: now,
          }),
        ]);
    });

    it.each([
      ['an empty name', { name: '' }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['negative stock', { stock: -1 }, 'stock'],
      ['fractional stock', { stock: 2.5 }, 'stock'],
      ['a per-user limit below 1', { perUserLimit: 0 }, 'perUserLimit'],
      ['a fractional per-user limit', { perUserLimit: 1.5 }, 'perUserLimit'],
      ['a max per order below 1', { maxPerOrder: 0 }, 'maxPerOrder'],
      ['a max per order above the per-user limit', { perUserLimit: 2, maxPerOrder: 3 }, 'maxPerOrder'],
      [
        'a window ending before it starts',
        { saleStartsAt: '2030-05-01T12:00:00.000Z', saleEndsAt: '2030-05-01T09:00:00.000Z' },
        'saleEndsAt',
      ],
      [
        'an empty window',
        { saleStartsAt: '2030-05-01T12:00:00.000Z', saleEndsAt: '2030-05-01T12:00:00.000Z' },
        'saleEndsAt',
      ],
    ])('refuses %s, naming the field', (_what, terms, field) => {
      const error = given([]).when(list(terms)).thenThrows(InvalidProductTerms);

      expect(error.field).toBe(field);
      expect(error.code).toBe('INVALID_PRODUCT');
    });

    // ISO times may carry an offset or omit milliseconds; the window is about instants, not text.
    it('accepts a window whose end is after its start when the start carries an offset', () => {
      const terms = { saleStartsAt: '2030-05-01T12:00:00+08:00', saleEndsAt: '2030-05-01T05:00:00Z' };

      given([])
        .when(list(terms))
        .then([productListed({ ...terms, listedAt: now })]);
    });

    it('refuses a window whose end is before its start when only the start has milliseconds', () => {
      const terms = { saleStartsAt: '2030-05-01T12:00:00.500Z', saleEndsAt: '2030-05-01T12:00:00Z' };

      const error = given([]).when(list(terms)).thenThrows(InvalidProductTerms);

      expect(error.field).toBe('saleEndsAt');
    });

    it('refuses to list a product twice', () => {
      const error = given([productListed()]).when(list()).thenThrows(ProductAlreadyListed);

      expect(error.productId).toBe(productId);
      expect(error.code).toBe('PRODUCT_ALREADY_LISTED');
    });
  });

  describe('AddStock', () => {
    it('restocks a listed product', () => {
      given([productListed()])
        .when({ type: 'AddStock', productId, quantity: 4, now })
        .then([{ type: 'StockAdded', data: { productId, quantity: 4, addedAt: now } }]);
    });

    it('refuses an unlisted product', () => {
      const error = given([])
        .when({ type: 'AddStock', productId, quantity: 4, now })
        .thenThrows(ProductNotListed);

      expect(error.productId).toBe(productId);
      expect(error.code).toBe('PRODUCT_NOT_FOUND');
    });

    it.each([0, -3, 1.5])('refuses a quantity of %s', (quantity) => {
      const error = given([productListed()])
        .when({ type: 'AddStock', productId, quantity, now })
        .thenThrows(InvalidProductTerms);

      expect(error.field).toBe('quantity');
    });

    it("refuses a restock that would take the product past MySQL's INT, and takes one that reaches it", () => {
      const listed = productListed({ stock: MAX_STOCK - 10 });
      given([listed, stockAdded({ quantity: 5 })])
        .when({ type: 'AddStock', productId, quantity: 5, now })
        .then([{ type: 'StockAdded', data: { productId, quantity: 5, addedAt: now } }]);
      const error = given([listed, stockAdded({ quantity: 5 })])
        .when({ type: 'AddStock', productId, quantity: 6, now })
        .thenThrows(InvalidProductTerms);

      expect(error.field).toBe('quantity');
      expect(error.message).toContain(String(MAX_STOCK));
    });
  });

  describe('RecordReconciliation', () => {
    it('records nothing when the gate was already right', () => {
      given([productListed()])
        .when(reconcile({ gateBefore: 4, gateAfter: 4 }))
        .then([]);
    });

    it('records what the reconciler corrected', () => {
      given([productListed()])
        .when(reconcile({ gateBefore: 3, gateAfter: 4 }))
        .then([
          {
            type: 'StockReconciled',
            data: { productId, gateBefore: 3, gateAfter: 4, mysqlStock: 6, inFlight: 2, reconciledAt: now },
          },
        ]);
    });

    it('records loading a gate that was not loaded', () => {
      given([productListed()])
        .when(reconcile({ gateBefore: null, gateAfter: 0 }))
        .then([stockReconciled({ gateBefore: null, gateAfter: 0, reconciledAt: now })]);
    });

    it('refuses an unlisted product', () => {
      given([])
        .when(reconcile({ gateBefore: 3, gateAfter: 4 }))
        .thenThrows(ProductNotListed);
    });
  });
});

describe('Product evolve', () => {
  it('folds listing and restocks into listed and added stock', () => {
    const state = [
      productListed({ stock: 10 }),
      stockAdded({ quantity: 5 }),
      stockAdded({ quantity: 3 }),
    ].reduce(evolveProduct, initialProductState);

    expect(state).toEqual({
      status: 'LISTED',
      productId,
      name: 'Mechanical keyboard',
      perUserLimit: 2,
      maxPerOrder: 2,
      saleStartsAt: '2030-05-01T09:00:00.000Z',
      saleEndsAt: '2030-05-01T12:00:00.000Z',
      requirePathToken: false,
      listedStock: 10,
      addedStock: 8,
    });
  });

  it('leaves stock alone on a reconciliation: it is an audit record, not a stock movement', () => {
    const listed = evolveProduct(initialProductState, productListed());

    expect(evolveProduct(listed, stockReconciled())).toEqual(listed);
  });

  it('ignores a restock of an unlisted product', () => {
    expect(evolveProduct(initialProductState, stockAdded())).toEqual({ status: 'UNLISTED' });
  });
});
