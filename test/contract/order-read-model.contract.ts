import { describe, expect, it } from '@jest/globals';
import type { OrderReadModel, OrderView } from '../../src/application/index.js';
import { freshPerTest, instant, type Teardown } from '../support/contract-helpers.js';
import { orderView } from '../support/contract-fixtures.js';

const ids = (orders: readonly OrderView[]): string[] => orders.map((o) => o.orderId);

export const orderReadModelContract = (
  name: string,
  make: () => Promise<OrderReadModel>,
  teardown?: Teardown<OrderReadModel>,
) =>
  describe(`OrderReadModel contract: ${name}`, () => {
    const orders = freshPerTest(make, teardown);

    const upsertAll = async (views: readonly OrderView[]): Promise<void> => {
      for (const view of views) await orders().upsert(view);
    };

    it("lists a buyer's orders newest first, a page at a time, of one product or of all", async () => {
      await upsertAll([
        orderView('a-old', { reservedAt: instant(1) }),
        orderView('a-mid', { reservedAt: instant(2), status: 'COMMITTED' }),
        orderView('a-tie-1', { reservedAt: instant(3) }),
        orderView('a-tie-2', { reservedAt: instant(3), status: 'RELEASED', reason: 'SOLD_OUT' }),
        orderView('a-elsewhere', { productId: 8, reservedAt: instant(4) }),
        orderView('b-new', { userId: 'user-2', reservedAt: instant(5) }),
      ]);

      const first = await orders().listByBuyer('user-1', { productId: 7, limit: 2 });
      expect(ids(first)).toEqual(['a-tie-2', 'a-tie-1']);
      expect(first[0]).toMatchObject({ status: 'RELEASED', reason: 'SOLD_OUT', reservedAt: instant(3) });
      const last = first[first.length - 1]!;
      const second = await orders().listByBuyer('user-1', {
        productId: 7,
        after: { reservedAt: last.reservedAt, orderId: last.orderId },
        limit: 2,
      });
      expect(ids(second)).toEqual(['a-mid', 'a-old']);
      expect(ids(await orders().listByBuyer('user-1', { limit: 10 }))).toEqual([
        'a-elsewhere',
        'a-tie-2',
        'a-tie-1',
        'a-mid',
        'a-old',
      ]);
      expect(await orders().listByBuyer('nobody', { limit: 10 })).toEqual([]);
    });

    it('reads back what was upserted, and null for an unknown order', async () => {
      const view = orderView('o1', { quantity: 2, reservedAt: instant(0.123), updatedAt: instant(1.456) });
      await orders().upsert(view);
      expect(await orders().get('o1')).toEqual(view);
      expect(await orders().get('o2')).toBeNull();
    });

    it('reads several orders in one call, leaving out the unknown ones', async () => {
      await upsertAll([orderView('one'), orderView('two', { status: 'COMMITTED' }), orderView('three')]);
      const found = await orders().getMany(['two', 'nobody', 'one']);
      expect([...found.keys()].sort()).toEqual(['one', 'two']);
      expect(found.get('two')).toMatchObject({ orderId: 'two', status: 'COMMITTED' });
      expect(await orders().getMany([])).toEqual(new Map());
    });

    it('replaces an order on a second upsert', async () => {
      await orders().upsert(orderView('o1'));
      const released = orderView('o1', {
        status: 'RELEASED',
        reason: 'PAYMENT_TIMEOUT',
        updatedAt: instant(900),
      });
      await orders().upsert(released);
      expect(await orders().get('o1')).toEqual(released);
      expect(await orders().findByProduct(7, ['RESERVED', 'RELEASED'])).toEqual([released]);
    });

    it("sums a user's units of one product over the given statuses only", async () => {
      await upsertAll([
        orderView('reserved', { quantity: 2, status: 'RESERVED' }),
        orderView('committed', { quantity: 1, status: 'COMMITTED' }),
        orderView('paid', { quantity: 4, status: 'PAID' }),
        orderView('released', { quantity: 3, status: 'RELEASED', reason: 'CANCELLED' }),
        orderView('other-user', { userId: 'user-2', quantity: 5 }),
        orderView('other-product', { productId: 8, quantity: 6 }),
      ]);
      expect(await orders().unitsHeld('user-1', 7, ['RESERVED', 'COMMITTED', 'PAID'])).toBe(7);
      expect(await orders().unitsHeld('user-1', 7, ['RESERVED'])).toBe(2);
      expect(await orders().unitsHeld('user-1', 7, ['RELEASED'])).toBe(3);
      expect(await orders().unitsHeld('user-1', 7, [])).toBe(0);
      expect(await orders().unitsHeld('user-2', 7, ['RESERVED'])).toBe(5);
      expect(await orders().unitsHeld('user-1', 8, ['RESERVED'])).toBe(6);
      expect(await orders().unitsHeld('nobody', 7, ['RESERVED'])).toBe(0);
    });

    it('upserts several orders at once, inserting new ones and replacing known ones', async () => {
      await orders().upsert(orderView('known'));
      const replaced = orderView('known', { status: 'COMMITTED', updatedAt: instant(5) });
      const added = orderView('added', { quantity: 3 });
      await orders().upsertMany([replaced, added]);
      expect(await orders().get('known')).toEqual(replaced);
      expect(await orders().get('added')).toEqual(added);
      await orders().upsertMany([]);
      expect(await orders().findByProduct(7, ['RESERVED', 'COMMITTED'])).toHaveLength(2);
    });

    it("sums several users' units of one product at once, leaving out users who hold none", async () => {
      await upsertAll([
        orderView('a1', { userId: 'a', quantity: 2, status: 'COMMITTED' }),
        orderView('a2', { userId: 'a', quantity: 1, status: 'PAID' }),
        orderView('a3', { userId: 'a', quantity: 5, status: 'RESERVED' }),
        orderView('b1', { userId: 'b', quantity: 4, status: 'COMMITTED' }),
        orderView('b2', { userId: 'b', quantity: 9, status: 'COMMITTED', productId: 8 }),
        orderView('c1', { userId: 'c', quantity: 6, status: 'COMMITTED' }),
      ]);
      const held = await orders().unitsHeldByUsers(['a', 'b', 'nobody', 'a'], 7, ['COMMITTED', 'PAID']);
      expect(Object.fromEntries(held)).toEqual({ a: 3, b: 4 });
      expect((await orders().unitsHeldByUsers([], 7, ['COMMITTED'])).size).toBe(0);
      expect((await orders().unitsHeldByUsers(['a'], 7, [])).size).toBe(0);
    });

    it("tallies a product's orders and units by status and release reason", async () => {
      await upsertAll([
        orderView('r1', { quantity: 2 }),
        orderView('r2', { quantity: 1, userId: 'user-2' }),
        orderView('c1', { quantity: 3, status: 'COMMITTED' }),
        orderView('x1', { status: 'RELEASED', reason: 'SOLD_OUT' }),
        orderView('x2', { quantity: 2, status: 'RELEASED', reason: 'SOLD_OUT' }),
        orderView('x3', { status: 'RELEASED', reason: 'PAYMENT_TIMEOUT' }),
        orderView('other', { productId: 8, quantity: 9, status: 'PAID' }),
      ]);
      const key = (t: { status: string; reason: string | null }) => `${t.status}/${t.reason ?? ''}`;
      const tallies = (await orders().tally(7)).sort((a, b) => key(a).localeCompare(key(b)));
      expect(tallies).toEqual([
        { status: 'COMMITTED', reason: null, orders: 1, units: 3 },
        { status: 'RELEASED', reason: 'PAYMENT_TIMEOUT', orders: 1, units: 1 },
        { status: 'RELEASED', reason: 'SOLD_OUT', orders: 2, units: 3 },
        { status: 'RESERVED', reason: null, orders: 2, units: 3 },
      ]);
      expect(await orders().tally(99)).toEqual([]);
    });

    it('finds orders of one status updated before a time, oldest first, up to a limit', async () => {
      await upsertAll([
        orderView('third', { status: 'COMMITTED', updatedAt: instant(30) }),
        orderView('first', { status: 'COMMITTED', updatedAt: instant(10) }),
        orderView('at-cutoff', { status: 'COMMITTED', updatedAt: instant(40) }),
        orderView('second', { status: 'COMMITTED', updatedAt: instant(20), productId: 8 }),
        orderView('too-new', { status: 'COMMITTED', updatedAt: instant(50) }),
        orderView('other-status', { status: 'RESERVED', updatedAt: instant(5) }),
      ]);
      expect(ids(await orders().findByStatus('COMMITTED', instant(40), 10))).toEqual([
        'first',
        'second',
        'third',
      ]);
      expect(ids(await orders().findByStatus('COMMITTED', instant(40), 2))).toEqual(['first', 'second']);
      expect(ids(await orders().findByStatus('COMMITTED', instant(10), 10))).toEqual([]);
      expect(ids(await orders().findByStatus('RESERVED', instant(100), 10))).toEqual(['other-status']);
      expect(ids(await orders().findByStatus('PAID', instant(100), 10))).toEqual([]);
    });

    it('finds the orders of a product with one of the given statuses', async () => {
      await upsertAll([
        orderView('a', { status: 'RESERVED' }),
        orderView('b', { status: 'COMMITTED' }),
        orderView('c', { status: 'PAID' }),
        orderView('d', { status: 'RELEASED', reason: 'SOLD_OUT' }),
        orderView('elsewhere', { productId: 8, status: 'RESERVED' }),
      ]);
      const found = await orders().findByProduct(7, ['RESERVED', 'COMMITTED']);
      expect(ids(found).sort()).toEqual(['a', 'b']);
      expect(found.find((o) => o.orderId === 'b')).toEqual(orderView('b', { status: 'COMMITTED' }));
      expect(ids(await orders().findByProduct(8, ['RESERVED', 'COMMITTED']))).toEqual(['elsewhere']);
      expect(await orders().findByProduct(7, [])).toEqual([]);
      expect(await orders().findByProduct(9, ['RESERVED'])).toEqual([]);
    });
  });
