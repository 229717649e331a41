import { describe, expect, it } from '@jest/globals';
import type { Inventory } from '../../src/application/index.js';
import { countWhere, freshPerTest, instant, type Teardown } from '../support/contract-helpers.js';
import { newProduct } from '../support/contract-fixtures.js';

export const inventoryContract = (
  name: string,
  make: () => Promise<Inventory>,
  teardown?: Teardown<Inventory>,
) =>
  describe(`Inventory contract: ${name}`, () => {
    const inventory = freshPerTest(make, teardown);

    const stockOf = async (productId: number): Promise<number | undefined> =>
      (await inventory().get(productId))?.stock;

    const versionOf = async (productId: number): Promise<number> => {
      const record = await inventory().get(productId);
      if (!record) throw new Error(`product ${productId} is gone`);
      return record.version;
    };

    describe('create, get and list', () => {
      it('creates products with distinct ids and reads them back as created', async () => {
        const windowed = newProduct({
          name: 'windowed',
          stock: 3,
          perUserLimit: 1,
          maxPerOrder: 1,
          saleStartsAt: instant(0),
          saleEndsAt: instant(3_600.5),
        });
        const open = newProduct({ name: 'open', stock: 1_000_000, perUserLimit: 5, maxPerOrder: 3 });
        const a = await inventory().create(windowed);
        const b = await inventory().create(open);
        expect(a).toMatchObject(windowed);
        expect(b).toMatchObject(open);
        expect(a.productId).not.toBe(b.productId);
        expect(await inventory().get(a.productId)).toEqual(a);
        expect(await inventory().get(b.productId)).toEqual(b);
        const listed = await inventory().list();
        expect(listed).toHaveLength(2);
        expect(listed).toEqual(expect.arrayContaining([a, b]));
      });

      it('answers null for an unknown product', async () => {
        const created = await inventory().create(newProduct());
        expect(await inventory().get(created.productId + 1_000)).toBeNull();
      });
    });

    describe('tryDecrement', () => {
      it('takes stock only when at least the quantity is left, never going below 0', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 5 }));
        expect(await inventory().tryDecrement(productId, 3)).toBe(true);
        expect(await stockOf(productId)).toBe(2);
        expect(await inventory().tryDecrement(productId, 3)).toBe(false);
        expect(await stockOf(productId)).toBe(2);
        expect(await inventory().tryDecrement(productId, 2)).toBe(true);
        expect(await inventory().tryDecrement(productId, 1)).toBe(false);
        expect(await stockOf(productId)).toBe(0);
      });

      it('takes nothing from an unknown product', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 5 }));
        expect(await inventory().tryDecrement(productId + 1_000, 1)).toBe(false);
        expect(await stockOf(productId)).toBe(5);
      });

      it('lets exactly 20 of 50 concurrent single-unit decrements of stock 20 through', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 20 }));
        const taken = await Promise.all(
          Array.from({ length: 50 }, () => inventory().tryDecrement(productId, 1)),
        );
        expect(countWhere(taken, (t) => t)).toBe(20);
        expect(await stockOf(productId)).toBe(0);
      });
    });

    describe('decrementMany', () => {
      it('takes the whole sum when it fits', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 10 }));
        expect(await inventory().decrementMany(productId, [2, 3, 4])).toEqual([true, true, true]);
        expect(await stockOf(productId)).toBe(1);
      });

      it('falls back to one by one, in the given order, when the sum does not fit', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 5 }));
        expect(await inventory().decrementMany(productId, [2, 2, 2])).toEqual([true, true, false]);
        expect(await stockOf(productId)).toBe(1);
      });

      it('does not skip ahead to pack the stock better than the given order', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 5 }));
        expect(await inventory().decrementMany(productId, [4, 2, 1])).toEqual([true, false, true]);
        expect(await stockOf(productId)).toBe(0);
      });

      it('sells exactly the stock when merged decrements race', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 20 }));
        const batches = await Promise.all(
          Array.from({ length: 10 }, () => inventory().decrementMany(productId, [1, 2])),
        );
        const taken = batches.reduce((sum, answers) => sum + (answers[0] ? 1 : 0) + (answers[1] ? 2 : 0), 0);
        // each batch takes at least its single unit while any stock is left, so all 20 go, and no more
        expect(taken).toBe(20);
        expect(await stockOf(productId)).toBe(0);
      });
    });

    describe('increment and version', () => {
      it('gives stock back', async () => {
        const { productId } = await inventory().create(newProduct({ stock: 5 }));
        await inventory().tryDecrement(productId, 5);
        await inventory().increment(productId, 3);
        expect(await stockOf(productId)).toBe(3);
        expect(await inventory().tryDecrement(productId, 3)).toBe(true);
      });

      it('moves the version up on every change and leaves it alone on a refused decrement', async () => {
        const { productId, version } = await inventory().create(newProduct({ stock: 5 }));
        const versions = [version];
        await inventory().tryDecrement(productId, 1);
        versions.push(await versionOf(productId));
        await inventory().decrementMany(productId, [1, 1]);
        versions.push(await versionOf(productId));
        await inventory().increment(productId, 4);
        versions.push(await versionOf(productId));
        for (let i = 1; i < versions.length; i += 1)
          expect(versions[i]).toBeGreaterThan(versions[i - 1] ?? Infinity);
        expect(await inventory().tryDecrement(productId, 100)).toBe(false);
        expect(await versionOf(productId)).toBe(versions.at(-1));
      });
    });
  });
