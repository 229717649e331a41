import { describe, expect, it } from '@jest/globals';
import type { GateAnswer, GateReservation, StockGate } from '../../src/application/index.js';
import { countWhere, freshPerTest, type Teardown } from '../support/contract-helpers.js';

const PRODUCT = 1;
const OTHER_PRODUCT = 2;

const reservation = (orderId: string, overrides: Partial<GateReservation> = {}): GateReservation => ({
  productId: PRODUCT,
  orderId,
  userId: `user-of-${orderId}`,
  quantity: 1,
  perUserLimit: 5,
  ...overrides,
});

const okCount = (answers: readonly GateAnswer[]): number => countWhere(answers, (a) => a.ok);

export const stockGateContract = (
  name: string,
  make: () => Promise<StockGate>,
  teardown?: Teardown<StockGate>,
) =>
  describe(`StockGate contract: ${name}`, () => {
    const gate = freshPerTest(make, teardown);

    describe('a product that was never warmed', () => {
      it('answers NOT_LOADED to a reservation, never SOLD_OUT and never an error', async () => {
        await expect(gate().reserve(reservation('o1'))).resolves.toEqual({ ok: false, reason: 'NOT_LOADED' });
      });

      it('has no stock figure (null, not 0), adjusts to null and holds nothing', async () => {
        expect(await gate().stockLeft(PRODUCT)).toBeNull();
        expect(await gate().adjust(PRODUCT, 5)).toBeNull();
        expect(await gate().held(PRODUCT)).toEqual(new Map());
      });

      it('stays unloaded after an adjust (an INCRBY must not create the gate)', async () => {
        await gate().adjust(PRODUCT, 10);
        expect(await gate().stockLeft(PRODUCT)).toBeNull();
        await expect(gate().reserve(reservation('o1'))).resolves.toEqual({ ok: false, reason: 'NOT_LOADED' });
      });

      it('restores nothing', async () => {
        expect(await gate().restore(PRODUCT, 'o1')).toBe(false);
        expect(await gate().stockLeft(PRODUCT)).toBeNull();
      });
    });

    describe('warm', () => {
      it('loads the stock, product by product', async () => {
        expect(await gate().warm(PRODUCT, 100)).toBe('WARMED');
        expect(await gate().stockLeft(PRODUCT)).toBe(100);
        expect(await gate().stockLeft(OTHER_PRODUCT)).toBeNull();
      });

      it('leaves a live gate alone, so sold stock is not re-opened', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().reserve(reservation('o1', { quantity: 3 }));
        expect(await gate().warm(PRODUCT, 10)).toBe('ALREADY_LIVE');
        expect(await gate().stockLeft(PRODUCT)).toBe(7);
      });

      it('treats a sold-out gate (stock 0) as live', async () => {
        await gate().warm(PRODUCT, 1);
        expect((await gate().reserve(reservation('o1'))).ok).toBe(true);
        expect(await gate().warm(PRODUCT, 50)).toBe('ALREADY_LIVE');
        expect(await gate().stockLeft(PRODUCT)).toBe(0);
        await expect(gate().reserve(reservation('o2'))).resolves.toEqual({
          ok: false,
          reason: 'SOLD_OUT',
          stockLeft: 0,
        });
      });

      it('overwrites a live gate with force', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().reserve(reservation('o1', { quantity: 3 }));
        expect(await gate().warm(PRODUCT, 42, { force: true })).toBe('WARMED');
        expect(await gate().stockLeft(PRODUCT)).toBe(42);
      });
    });

    describe('reserve', () => {
      it('takes the quantity and answers the stock left', async () => {
        await gate().warm(PRODUCT, 10);
        await expect(gate().reserve(reservation('o1', { quantity: 3 }))).resolves.toEqual({
          ok: true,
          stockLeft: 7,
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(7);
      });

      it('takes nothing from a request larger than the stock left, and says what is left', async () => {
        await gate().warm(PRODUCT, 3);
        await expect(gate().reserve(reservation('o1', { quantity: 5 }))).resolves.toEqual({
          ok: false,
          reason: 'SOLD_OUT',
          stockLeft: 3,
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(3);
        expect(await gate().held(PRODUCT)).toEqual(new Map());
        await expect(gate().reserve(reservation('o2', { quantity: 3 }))).resolves.toEqual({
          ok: true,
          stockLeft: 0,
        });
      });

      it('never hands out more than the stock under 2,000 concurrent reservations', async () => {
        await gate().warm(PRODUCT, 100);
        const answers = await Promise.all(
          Array.from({ length: 2_000 }, (_, i) => gate().reserve(reservation(`o${i}`, { perUserLimit: 1 }))),
        );
        expect(okCount(answers)).toBe(100);
        expect(countWhere(answers, (a) => !a.ok && a.reason === 'SOLD_OUT')).toBe(1_900);
        // every winner saw a different stock figure: the check and the decrement were one step
        const stockSeen = answers.flatMap((a) => (a.ok ? [a.stockLeft] : []));
        expect(new Set(stockSeen)).toEqual(new Set(Array.from({ length: 100 }, (_, i) => i)));
        expect(await gate().stockLeft(PRODUCT)).toBe(0);
        expect((await gate().held(PRODUCT)).size).toBe(100);
      });

      it('keeps stock and reservations in step under concurrent mixed quantities', async () => {
        await gate().warm(PRODUCT, 100);
        const requests = Array.from({ length: 500 }, (_, i) =>
          reservation(`o${i}`, { quantity: (i % 3) + 1 }),
        );
        const answers = await Promise.all(requests.map((r) => gate().reserve(r)));
        const taken = requests.reduce((sum, r, i) => sum + (answers[i]?.ok ? r.quantity : 0), 0);
        const left = await gate().stockLeft(PRODUCT);
        expect(left).not.toBeNull();
        expect(left).toBeGreaterThanOrEqual(0);
        expect(taken).toBe(100 - (left ?? 0));
        const held = [...(await gate().held(PRODUCT)).values()].reduce((a, b) => a + b, 0);
        expect(held).toBe(taken);
      });

      it('enforces the per-user limit across orders, counting quantity', async () => {
        await gate().warm(PRODUCT, 100);
        const buyer = { userId: 'buyer', perUserLimit: 3 };
        expect((await gate().reserve(reservation('o1', { ...buyer, quantity: 2 }))).ok).toBe(true);
        await expect(gate().reserve(reservation('o2', { ...buyer, quantity: 2 }))).resolves.toEqual({
          ok: false,
          reason: 'LIMIT_EXCEEDED',
        });
        expect((await gate().reserve(reservation('o3', { ...buyer, quantity: 1 }))).ok).toBe(true);
        await expect(gate().reserve(reservation('o4', { ...buyer, quantity: 1 }))).resolves.toEqual({
          ok: false,
          reason: 'LIMIT_EXCEEDED',
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(97);
        expect(
          (await gate().reserve(reservation('o5', { userId: 'someone-else', perUserLimit: 3 }))).ok,
        ).toBe(true);
      });

      it('enforces the per-user limit under concurrent requests of one user', async () => {
        await gate().warm(PRODUCT, 100);
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            gate().reserve(reservation(`o${i}`, { userId: 'eager', perUserLimit: 3 })),
          ),
        );
        expect(okCount(answers)).toBe(3);
        expect(countWhere(answers, (a) => !a.ok && a.reason === 'LIMIT_EXCEEDED')).toBe(47);
        expect(await gate().stockLeft(PRODUCT)).toBe(97);
      });

      describe('repeated for the same orderId (a retried call)', () => {
        it('takes the stock and the quota once, and answers as it did the first time', async () => {
          // exactly the stock and the buyer's limit: a second effect would answer SOLD_OUT or LIMIT_EXCEEDED
          await gate().warm(PRODUCT, 2);
          const order = reservation('o1', { userId: 'buyer', quantity: 2, perUserLimit: 2 });
          const first = await gate().reserve(order);
          expect(first).toEqual({ ok: true, stockLeft: 0 });
          for (let i = 0; i < 3; i += 1) await expect(gate().reserve(order)).resolves.toEqual(first);
          expect(await gate().stockLeft(PRODUCT)).toBe(0);
          expect(await gate().held(PRODUCT)).toEqual(new Map([['o1', 2]]));
          // the buyer's quota was counted once: one restore gives all of it back
          expect(await gate().restore(PRODUCT, 'o1')).toBe(true);
          expect(await gate().stockLeft(PRODUCT)).toBe(2);
          expect(
            (await gate().reserve(reservation('o2', { userId: 'buyer', quantity: 2, perUserLimit: 2 }))).ok,
          ).toBe(true);
        });

        it('takes one unit however many copies arrive at once', async () => {
          await gate().warm(PRODUCT, 10);
          const order = reservation('o1', { userId: 'buyer', perUserLimit: 1 });
          const answers = await Promise.all(Array.from({ length: 20 }, () => gate().reserve(order)));
          expect(countWhere(answers, (a) => a.ok)).toBe(20);
          expect(await gate().stockLeft(PRODUCT)).toBe(9);
          expect(await gate().held(PRODUCT)).toEqual(new Map([['o1', 1]]));
          await expect(
            gate().reserve(reservation('o2', { userId: 'buyer', perUserLimit: 1 })),
          ).resolves.toEqual({
            ok: false,
            reason: 'LIMIT_EXCEEDED',
          });
        });

        it('answers with the stock left now when others bought in between', async () => {
          await gate().warm(PRODUCT, 10);
          const order = reservation('o1', { quantity: 2 });
          await gate().reserve(order);
          await gate().reserve(reservation('o2', { quantity: 3 }));
          await expect(gate().reserve(order)).resolves.toEqual({ ok: true, stockLeft: 5 });
          expect(await gate().stockLeft(PRODUCT)).toBe(5);
        });

        it('does not take the stock again once the reservation was restored', async () => {
          await gate().warm(PRODUCT, 10);
          const order = reservation('o1', { userId: 'buyer', quantity: 2, perUserLimit: 2 });
          await gate().reserve(order);
          await gate().restore(PRODUCT, 'o1');
          // a late copy of the first call: the orderId was spent, so it changes nothing
          await gate().reserve(order);
          expect(await gate().stockLeft(PRODUCT)).toBe(10);
          expect(await gate().held(PRODUCT)).toEqual(new Map());
          expect(await gate().restore(PRODUCT, 'o1')).toBe(false);
          expect(
            (await gate().reserve(reservation('o2', { userId: 'buyer', quantity: 2, perUserLimit: 2 }))).ok,
          ).toBe(true);
        });

        it('tries again after a refusal, since a refusal took nothing', async () => {
          await gate().warm(PRODUCT, 1);
          const order = reservation('o1', { quantity: 2 });
          await expect(gate().reserve(order)).resolves.toEqual({
            ok: false,
            reason: 'SOLD_OUT',
            stockLeft: 1,
          });
          await gate().adjust(PRODUCT, 1);
          await expect(gate().reserve(order)).resolves.toEqual({ ok: true, stockLeft: 0 });
        });
      });

      it('counts the per-user limit per product', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().warm(OTHER_PRODUCT, 10);
        const buyer = { userId: 'buyer', perUserLimit: 1 };
        expect((await gate().reserve(reservation('o1', buyer))).ok).toBe(true);
        expect((await gate().reserve(reservation('o2', { ...buyer, productId: OTHER_PRODUCT }))).ok).toBe(
          true,
        );
        expect(await gate().stockLeft(PRODUCT)).toBe(9);
        expect(await gate().stockLeft(OTHER_PRODUCT)).toBe(9);
      });
    });

    describe('restore', () => {
      it('gives the stock back once, however often the restore is repeated', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().reserve(reservation('o1', { quantity: 2 }));
        const first = await Promise.all(Array.from({ length: 5 }, () => gate().restore(PRODUCT, 'o1')));
        const later: boolean[] = [];
        for (let i = 0; i < 5; i += 1) later.push(await gate().restore(PRODUCT, 'o1'));
        expect(countWhere([...first, ...later], (restored) => restored)).toBe(1);
        expect(await gate().stockLeft(PRODUCT)).toBe(10);
      });

      it("gives the user's quota back once, so the user can buy again but not beyond the limit", async () => {
        await gate().warm(PRODUCT, 10);
        const buyer = { userId: 'buyer', perUserLimit: 2, quantity: 2 };
        expect((await gate().reserve(reservation('o1', buyer))).ok).toBe(true);
        for (let i = 0; i < 10; i += 1) await gate().restore(PRODUCT, 'o1');
        expect((await gate().reserve(reservation('o2', buyer))).ok).toBe(true);
        await expect(gate().reserve(reservation('o3', { ...buyer, quantity: 1 }))).resolves.toEqual({
          ok: false,
          reason: 'LIMIT_EXCEEDED',
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(8);
      });

      it('changes nothing for an unknown orderId', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().reserve(reservation('o1', { quantity: 2 }));
        expect(await gate().restore(PRODUCT, 'never-reserved')).toBe(false);
        expect(await gate().stockLeft(PRODUCT)).toBe(8);
        expect(await gate().held(PRODUCT)).toEqual(new Map([['o1', 2]]));
      });

      it('does not restore an order that the gate refused', async () => {
        await gate().warm(PRODUCT, 1);
        await gate().reserve(reservation('o1'));
        expect((await gate().reserve(reservation('refused'))).ok).toBe(false);
        expect(await gate().restore(PRODUCT, 'refused')).toBe(false);
        expect(await gate().stockLeft(PRODUCT)).toBe(0);
      });
    });

    describe('adjust', () => {
      it('adds and removes relative to the current stock and answers the result', async () => {
        await gate().warm(PRODUCT, 10);
        expect(await gate().adjust(PRODUCT, 5)).toBe(15);
        expect(await gate().adjust(PRODUCT, -3)).toBe(12);
        expect(await gate().stockLeft(PRODUCT)).toBe(12);
      });

      it('does not erase reservations made concurrently (INCRBY, never SET)', async () => {
        await gate().warm(PRODUCT, 100);
        const reservations = Array.from({ length: 30 }, (_, i) => gate().reserve(reservation(`o${i}`)));
        const adjustments = [gate().adjust(PRODUCT, 10), gate().adjust(PRODUCT, -5)];
        const answers = await Promise.all(reservations);
        await Promise.all(adjustments);
        expect(okCount(answers)).toBe(30);
        expect(await gate().stockLeft(PRODUCT)).toBe(100 - 30 + 10 - 5);
      });
    });

    describe("a buyer's Idempotency-Key", () => {
      const keyed = (orderId: string, key: string, overrides: Partial<GateReservation> = {}) =>
        reservation(orderId, { userId: 'alice', idempotency: { key, ttlMs: 60_000 }, ...overrides });

      it('records the reservation under the key: a repeat answers it and takes nothing', async () => {
        await gate().warm(PRODUCT, 5);
        expect(await gate().reserve(keyed('first', 'k1'))).toEqual({ ok: true, stockLeft: 4 });

        expect(await gate().reserve(keyed('second', 'k1'))).toEqual({
          ok: true,
          stockLeft: 4,
          replayOf: 'first',
        });
        expect(await gate().held(PRODUCT)).toEqual(new Map([['first', 1]]));
        expect(await gate().recall(PRODUCT, 'alice', 'k1')).toEqual({
          outcome: 'RESERVED',
          orderId: 'first',
          quantity: 1,
        });
      });

      it('answers 20 calls at once with one key with one reservation', async () => {
        await gate().warm(PRODUCT, 5);
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => gate().reserve(keyed(`o${i}`, 'burst'))),
        );
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
        expect(new Set(answers.map((a) => (a.ok && 'replayOf' in a ? a.replayOf : 'taken')))).toEqual(
          new Set(['taken', [...(await gate().held(PRODUCT)).keys()][0]]),
        );
      });

      it('records a refusal: the repeat is refused again, even when stock came back', async () => {
        await gate().warm(PRODUCT, 0);
        expect(await gate().reserve(keyed('first', 'k1'))).toMatchObject({ ok: false, reason: 'SOLD_OUT' });
        await gate().adjust(PRODUCT, 3);
        expect(await gate().reserve(keyed('second', 'k1'))).toEqual({
          ok: false,
          reason: 'SOLD_OUT',
          stockLeft: 3,
          replayed: true,
        });
        expect(await gate().reserve(keyed('third', 'k2', { perUserLimit: 0 }))).toEqual({
          ok: false,
          reason: 'LIMIT_EXCEEDED',
        });
        expect(await gate().reserve(keyed('fourth', 'k2'))).toEqual({
          ok: false,
          reason: 'LIMIT_EXCEEDED',
          replayed: true,
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(3);
      });

      it('refuses the key for another quantity (KEY_REUSED), and scopes it to its buyer and product', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().warm(OTHER_PRODUCT, 5);
        await gate().reserve(keyed('first', 'k1'));

        expect(await gate().reserve(keyed('second', 'k1', { quantity: 2 }))).toEqual({
          ok: false,
          reason: 'KEY_REUSED',
        });
        expect(await gate().reserve(keyed('bobs', 'k1', { userId: 'bob' }))).toEqual({
          ok: true,
          stockLeft: 3,
        });
        expect(await gate().reserve(keyed('there', 'k1', { productId: OTHER_PRODUCT }))).toEqual({
          ok: true,
          stockLeft: 4,
        });
      });

      it('forgets the key on a restore that asks it to, and only for its own reservation', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(keyed('first', 'k1'));
        await gate().reserve(keyed('second', 'k2'));

        expect(await gate().restore(PRODUCT, 'first', { userId: 'alice', key: 'k2' })).toBe(true);
        expect(await gate().recall(PRODUCT, 'alice', 'k2')).toMatchObject({ orderId: 'second' });
        expect(await gate().restore(PRODUCT, 'second', { userId: 'alice', key: 'k2' })).toBe(true);
        expect(await gate().recall(PRODUCT, 'alice', 'k2')).toBeNull();
        // a plain restore (a release) keeps the key: a repeat still finds its order
        await gate().reserve(keyed('third', 'k3'));
        await gate().restore(PRODUCT, 'third');
        expect(await gate().reserve(keyed('fourth', 'k3'))).toMatchObject({ ok: true, replayOf: 'third' });
        expect(await gate().stockLeft(PRODUCT)).toBe(5);
      });

      it('claims a key once: NEW, then SAME for the same request and OTHER for another', async () => {
        expect(await gate().claimKey('alice', 'k1', '1:1', 60_000)).toBe('NEW');
        expect(await gate().claimKey('alice', 'k1', '1:1', 60_000)).toBe('SAME');
        expect(await gate().claimKey('alice', 'k1', '2:1', 60_000)).toBe('OTHER');
        expect(await gate().claimKey('bob', 'k1', '2:1', 60_000)).toBe('NEW');
        expect(await gate().recall(PRODUCT, 'alice', 'k1')).toBeNull();
      });
    });

    describe('held', () => {
      it('lists the reservations not restored, with their quantities', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().warm(OTHER_PRODUCT, 10);
        await gate().reserve(reservation('a', { quantity: 1 }));
        await gate().reserve(reservation('b', { quantity: 2 }));
        await gate().reserve(reservation('c', { quantity: 3 }));
        await gate().reserve(reservation('elsewhere', { productId: OTHER_PRODUCT }));
        await gate().reserve(reservation('too-big', { quantity: 50 }));
        await gate().restore(PRODUCT, 'b');
        expect(await gate().held(PRODUCT)).toEqual(
          new Map([
            ['a', 1],
            ['c', 3],
          ]),
        );
        expect(await gate().held(OTHER_PRODUCT)).toEqual(new Map([['elsewhere', 1]]));
      });
    });
  });
