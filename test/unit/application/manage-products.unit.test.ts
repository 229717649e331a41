import { afterEach, describe, expect, it } from '@jest/globals';
import { InvalidProductTerms, ProductNotListed, productStreamId } from '../../../src/domain/index.js';
import { type AppHarness, SALE_OPENS, startApp } from '../../support/app-harness.js';

describe('ManageProducts', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  const terms = {
    name: 'flash widget',
    stock: 25,
    perUserLimit: 2,
    maxPerOrder: 1,
    saleStartsAt: null,
    saleEndsAt: null,
  };

  describe('list', () => {
    it('writes the product and its ProductListed event, and warms the gate with its stock', async () => {
      app = await startApp();

      const answer = await app.products.list(terms, 'list-1');

      expect(answer).toEqual({
        ...terms,
        requirePathToken: false,
        productId: 1,
        version: 0,
        gate: 'WARMED',
      });
      expect(await app.mysqlStock(1)).toBe(25);
      expect(await app.gate.stockLeft(1)).toBe(25);
      expect(await app.streamEvents(productStreamId(1))).toEqual([
        {
          type: 'ProductListed',
          data: { ...terms, requirePathToken: false, productId: 1, listedAt: SALE_OPENS },
        },
      ]);
      expect(await app.buy('alice', 1)).toMatchObject({ ok: true });
      expect((await app.products.list({ ...terms, stock: 3 }, 'list-2')).productId).toBe(2);
      expect(await app.gate.stockLeft(2)).toBe(3);
    });

    it('refuses invalid terms (maxPerOrder above perUserLimit) and writes nothing', async () => {
      app = await startApp();
      const before = app.writes();

      await expect(
        app.products.list({ ...terms, perUserLimit: 1, maxPerOrder: 2 }, 'list-1'),
      ).rejects.toBeInstanceOf(InvalidProductTerms);

      expect(app.writes()).toEqual(before);
      expect(app.db.products.size).toBe(0);
      expect(await app.gate.stockLeft(1)).toBeNull();
      // the id was not used up either
      expect((await app.products.list(terms, 'list-2')).productId).toBe(1);
    });
  });

  describe('restock', () => {
    it('adds to MySQL and to the gate, records StockAdded, and clears the sold-out flag', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 1 });
      await app.mustBuy('alice', productId);
      await app.drained();
      expect(await app.buy('bob', productId)).toMatchObject({ ok: false, code: 'SOLD_OUT' });

      const answer = await app.products.restock(productId, 5, 'restock-1');

      expect(answer).toMatchObject({ productId, stock: 5, gate: 'ALREADY_LIVE' });
      expect(await app.mysqlStock(productId)).toBe(5);
      expect(await app.gate.stockLeft(productId)).toBe(5);
      expect((await app.streamEvents(productStreamId(productId))).at(-1)).toEqual({
        type: 'StockAdded',
        data: { productId, quantity: 5, addedAt: SALE_OPENS },
      });
      expect(app.soldOut.isSoldOut(productId)).toBe(false);
      expect(await app.buy('bob', productId)).toMatchObject({ ok: true, status: 'RESERVED' });
      await app.drained();
      expect((await app.audit.run()).ok).toBe(true);
    });

    it('keeps reservations in flight counted: the gate gets only the added units', async () => {
      app = await startApp({ consumers: false });
      const productId = await app.listProduct({ stock: 4 });
      await app.mustBuy('alice', productId, 2);

      await app.products.restock(productId, 3, 'restock-1');

      expect(await app.gate.stockLeft(productId)).toBe(5);
      await app.startConsumers();
      await app.drained();
      expect(await app.mysqlStock(productId)).toBe(5);
      expect(await app.gate.stockLeft(productId)).toBe(5);
    });

    it('with the gate not loaded, MySQL takes the units and reconciliation loads the gate later', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 2 });
      app.memoryGate.forget(productId);

      const answer = await app.products.restock(productId, 3, 'restock-1');

      expect(answer).toMatchObject({ stock: 5, gate: 'NOT_LOADED' });
      await app.reconcile.run();
      expect(await app.gate.stockLeft(productId)).toBe(5);
    });

    it('of an unknown product or by less than one unit is refused, and nothing changes', async () => {
      app = await startApp();
      const productId = await app.listProduct({ stock: 2 });
      const before = app.writes();

      await expect(app.products.restock(42, 5, 'restock-1')).rejects.toBeInstanceOf(ProductNotListed);
      await expect(app.products.restock(productId, 0, 'restock-2')).rejects.toBeInstanceOf(
        InvalidProductTerms,
      );

      expect(app.writes()).toEqual(before);
      expect(await app.mysqlStock(productId)).toBe(2);
      expect(await app.gate.stockLeft(productId)).toBe(2);
    });
  });
});
