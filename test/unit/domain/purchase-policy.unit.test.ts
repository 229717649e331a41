import { describe, expect, it } from '@jest/globals';
import {
  orderSizeRejection,
  purchaseRejection,
  saleWindowRejection,
  userLimitRejection,
  type ProductTerms,
} from '../../../src/domain/index.js';
import { productId } from './builders.js';

const saleStartsAt = '2030-05-01T09:00:00.000Z';
const saleEndsAt = '2030-05-01T12:00:00.000Z';

const terms = (overrides: Partial<ProductTerms> = {}): ProductTerms => ({
  productId,
  name: 'Mechanical keyboard',
  perUserLimit: 5,
  maxPerOrder: 2,
  saleStartsAt,
  saleEndsAt,
  requirePathToken: false,
  ...overrides,
});

const saleNotActive = { code: 'SALE_NOT_ACTIVE' };
const limitExceeded = { code: 'LIMIT_EXCEEDED' };

describe('sale window [start, end)', () => {
  it.each([
    ['a second before the start', '2030-05-01T08:59:59.000Z'],
    ['exactly at the end', saleEndsAt],
    ['after the end', '2030-05-01T12:00:01.000Z'],
  ])('is closed %s', (_when, now) => {
    expect(saleWindowRejection(terms(), now)).toMatchObject(saleNotActive);
  });

  it.each([
    ['exactly at the start', saleStartsAt],
    ['in the middle', '2030-05-01T10:30:00.000Z'],
    ['a millisecond before the end', '2030-05-01T11:59:59.999Z'],
  ])('is open %s', (_when, now) => {
    expect(saleWindowRejection(terms(), now)).toBeNull();
  });

  it('names the start when the sale has not started, and the end when it is over', () => {
    expect(saleWindowRejection(terms(), '2030-05-01T08:00:00.000Z')?.detail).toContain(saleStartsAt);
    expect(saleWindowRejection(terms(), '2030-05-01T13:00:00.000Z')?.detail).toContain(saleEndsAt);
  });

  it('has no start when saleStartsAt is absent', () => {
    expect(saleWindowRejection(terms({ saleStartsAt: null }), '2000-01-01T00:00:00.000Z')).toBeNull();
    expect(saleWindowRejection(terms({ saleStartsAt: null }), saleEndsAt)).toMatchObject(saleNotActive);
  });

  it('has no end when saleEndsAt is absent', () => {
    expect(saleWindowRejection(terms({ saleEndsAt: null }), '2099-01-01T00:00:00.000Z')).toBeNull();
    expect(saleWindowRejection(terms({ saleEndsAt: null }), '2030-05-01T08:59:59.999Z')).toMatchObject(
      saleNotActive,
    );
  });

  it('is always open when both bounds are absent', () => {
    const open = terms({ saleStartsAt: null, saleEndsAt: null });

    expect(saleWindowRejection(open, '2000-01-01T00:00:00.000Z')).toBeNull();
    expect(saleWindowRejection(open, '2099-01-01T00:00:00.000Z')).toBeNull();
  });

  // The clock stamps milliseconds; a seller may write ISO times without them or with an offset.
  describe('compares instants, not text', () => {
    it('is open half a second after a start written without milliseconds', () => {
      expect(
        saleWindowRejection(terms({ saleStartsAt: '2030-05-01T09:00:00Z' }), '2030-05-01T09:00:00.500Z'),
      ).toBeNull();
    });

    it('is closed half a second after an end written without milliseconds', () => {
      expect(
        saleWindowRejection(terms({ saleEndsAt: '2030-05-01T12:00:00Z' }), '2030-05-01T12:00:00.500Z'),
      ).toMatchObject(saleNotActive);
    });

    it('is open after a start written with an offset', () => {
      // 17:00+08:00 is 09:00Z: the sale started an hour before 10:00Z.
      expect(
        saleWindowRejection(terms({ saleStartsAt: '2030-05-01T17:00:00+08:00' }), '2030-05-01T10:00:00.000Z'),
      ).toBeNull();
    });
  });
});

describe('order size', () => {
  it('allows up to maxPerOrder units', () => {
    expect(orderSizeRejection(terms({ maxPerOrder: 2 }), 1)).toBeNull();
    expect(orderSizeRejection(terms({ maxPerOrder: 2 }), 2)).toBeNull();
  });

  it('refuses one unit more than maxPerOrder', () => {
    const rejection = orderSizeRejection(terms({ maxPerOrder: 2 }), 3);

    expect(rejection).toMatchObject(limitExceeded);
    expect(rejection?.detail).toContain('2 per order');
  });
});

describe('per-user limit', () => {
  it.each([
    [0, 5],
    [3, 2],
    [4, 1],
  ])('allows %i held plus %i more with a limit of 5', (alreadyHeld, quantity) => {
    expect(userLimitRejection(terms({ perUserLimit: 5 }), alreadyHeld, quantity)).toBeNull();
  });

  it.each([
    [0, 6],
    [4, 2],
    [5, 1],
  ])('refuses %i held plus %i more with a limit of 5', (alreadyHeld, quantity) => {
    const rejection = userLimitRejection(terms({ perUserLimit: 5 }), alreadyHeld, quantity);

    expect(rejection).toMatchObject(limitExceeded);
    expect(rejection?.detail).toContain('5 per buyer');
  });
});

describe('purchase rejection on the hot path', () => {
  const during = '2030-05-01T10:00:00.000Z';

  it('accepts an order of allowed size during the sale', () => {
    expect(purchaseRejection(terms(), 2, during)).toBeNull();
  });

  it('refuses an order that is too large during the sale', () => {
    expect(purchaseRejection(terms(), 3, during)).toMatchObject(limitExceeded);
  });

  it('reports a closed window before the order size', () => {
    expect(purchaseRejection(terms(), 3, '2030-05-01T13:00:00.000Z')).toMatchObject(saleNotActive);
  });
});
