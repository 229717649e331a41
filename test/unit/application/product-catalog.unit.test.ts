import { describe, expect, it } from '@jest/globals';
import { MemoryDatabase } from '../../../src/adapters/memory/memory-database.js';
import { MemoryInventory } from '../../../src/adapters/memory/memory-inventory.js';
import { ProductCatalog } from '../../../src/application/index.js';
import { TestClock } from '../../support/app-doubles.js';

const TTL_MS = 2_000;

const setUp = async (max: number) => {
  const inventory = new MemoryInventory(new MemoryDatabase());
  const clock = new TestClock('2026-12-04T10:00:00.000Z');
  const product = await inventory.create({
    name: 'Kettle',
    stock: 5,
    perUserLimit: 1,
    maxPerOrder: 1,
    saleStartsAt: null,
    saleEndsAt: null,
  });
  let reads = 0;
  const counted = new Proxy(inventory, {
    get: (target, name, receiver) => {
      if (name === 'get') reads += 1;
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { catalog: new ProductCatalog(counted, clock, TTL_MS, max), clock, product, reads: () => reads };
};

describe('the product catalog kept in process', () => {
  it('keeps at most its bound of unknown ids, and a flood of them never pushes a product out', async () => {
    const { catalog, product, reads } = await setUp(100);
    await catalog.terms(product.productId);
    for (let id = 10_000; id < 20_000; id += 1) expect(await catalog.terms(id)).toBeNull();
    expect(catalog.size).toEqual({ known: 1, unknown: 100 });
    const before = reads();
    expect(await catalog.terms(product.productId)).toMatchObject({ name: 'Kettle' });
    expect(reads()).toBe(before);
  });

  it('forgets what has aged past its time, unknown ids included, and reads them again', async () => {
    const { catalog, clock, product, reads } = await setUp(100);
    await catalog.terms(product.productId);
    await catalog.terms(424_242);
    clock.advance(TTL_MS + 1);
    expect(catalog.cached(product.productId)).toBeUndefined();
    expect(catalog.cached(424_242)).toBeUndefined();
    await catalog.terms(434_343);
    expect(catalog.size).toEqual({ known: 0, unknown: 1 });
    const before = reads();
    await catalog.terms(product.productId);
    expect(reads()).toBe(before + 1);
  });
});
