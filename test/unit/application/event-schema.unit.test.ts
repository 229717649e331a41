import { describe, expect, it } from '@jest/globals';
import { defaultUpcaster } from '../../../src/application/index.js';

const listedV1 = {
  productId: 7,
  name: 'Mechanical keyboard',
  stock: 10,
  perUserLimit: 1,
  maxPerOrder: 1,
  saleStartsAt: null,
  saleEndsAt: null,
  listedAt: '2030-04-30T09:00:00.000Z',
};

describe('the schema this build reads', () => {
  it('reads a product listed before sale path tokens as one that takes orders without a token', () => {
    const read = defaultUpcaster.read({ type: 'ProductListed', schemaVersion: 1, data: listedV1 });

    expect(read).toEqual({ type: 'ProductListed', data: { ...listedV1, requirePathToken: false } });
  });

  it('reads a current ProductListed as written', () => {
    const data = { ...listedV1, requirePathToken: true };

    expect(defaultUpcaster.read({ type: 'ProductListed', schemaVersion: 2, data })).toEqual({
      type: 'ProductListed',
      data,
    });
  });
});
