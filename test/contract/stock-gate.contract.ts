import { describe, expect, it } from '@jest/globals';
import type { GateAnswer, GateReservation, SalePaths, StockGate } from '../../src/application/index.js';
import { countWhere, eventually, freshPerTest, type Teardown } from '../support/contract-helpers.js';

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

/** A gate under test, and the sale paths whose tokens it uses up (on the same server or in the same process). */
export type GateUnderTest = Readonly<{ gate: StockGate; paths: SalePaths }>;

const MINUTE = 60_000;

export const stockGateContract = (
  name: string,
  make: () => Promise<GateUnderTest>,
  teardown?: Teardown<GateUnderTest>,
) =>
  describe(`StockGate contract: ${name}`, () => {
    const subject = freshPerTest(make, teardown);
    const gate = () => subject().gate;
    const paths = () => subject().paths;

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
        expect(await gate().reserve(keyed('again', 'k2', { replayOnly: true }))).toMatchObject({
          replayOf: 'second',
        });
        expect(await gate().restore(PRODUCT, 'second', { userId: 'alice', key: 'k2' })).toBe(true);
        expect(await gate().reserve(keyed('again', 'k2', { replayOnly: true }))).toEqual({
          ok: false,
          reason: 'NOT_RECORDED',
        });
        // a plain restore (a release) keeps the key: a repeat still finds its order
        await gate().reserve(keyed('third', 'k3'));
        await gate().restore(PRODUCT, 'third');
        expect(await gate().reserve(keyed('fourth', 'k3'))).toMatchObject({ ok: true, replayOf: 'third' });
        expect(await gate().stockLeft(PRODUCT)).toBe(5);
      });

      it('answers only from the record when asked for a replay, and takes nothing without one', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(keyed('first', 'k1'));

        expect(await gate().reserve(keyed('second', 'k1', { replayOnly: true }))).toEqual({
          ok: true,
          stockLeft: 4,
          replayOf: 'first',
        });
        expect(await gate().reserve(keyed('third', 'k2', { replayOnly: true }))).toEqual({
          ok: false,
          reason: 'NOT_RECORDED',
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
        // nothing was recorded under k2 by the replay: it is still a request of its own
        expect(await gate().reserve(keyed('fourth', 'k2'))).toEqual({ ok: true, stockLeft: 3 });
      });
    });

    describe("a buyer's live keys", () => {
      const capped = (orderId: string, key: string, overrides: Partial<GateReservation> = {}) =>
        reservation(orderId, {
          userId: 'alice',
          idempotency: { key, ttlMs: MINUTE, maxLive: 3 },
          ...overrides,
        });

      it('holds at most maxLive of them on a product: past it KEYS_EXHAUSTED, nothing taken or recorded', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().warm(OTHER_PRODUCT, 10);
        expect(await gate().reserve(capped('o1', 'k1'))).toMatchObject({ ok: true });
        expect(await gate().reserve(capped('o2', 'k2', { perUserLimit: 0 }))).toMatchObject({
          reason: 'LIMIT_EXCEEDED',
        });
        expect(await gate().reserve(capped('o3', 'k3'))).toMatchObject({ ok: true });

        const refused = await gate().reserve(capped('o4', 'k4'));
        expect(refused).toMatchObject({ ok: false, reason: 'KEYS_EXHAUSTED' });
        expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(MINUTE - 10_000);
        expect((refused as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(MINUTE);
        expect(await gate().stockLeft(PRODUCT)).toBe(8);
        expect(await gate().reserve(capped('o5', 'k4', { replayOnly: true }))).toEqual({
          ok: false,
          reason: 'NOT_RECORDED',
        });
        // a repeat is answered from its key; a request without a key, another buyer's and another product's go on
        expect(await gate().reserve(capped('o6', 'k1'))).toMatchObject({ ok: true, replayOf: 'o1' });
        expect(await gate().reserve(reservation('o7', { userId: 'alice' }))).toMatchObject({ ok: true });
        expect(await gate().reserve(capped('o8', 'k4', { userId: 'bob' }))).toMatchObject({ ok: true });
        expect(await gate().reserve(capped('o9', 'k4', { productId: OTHER_PRODUCT }))).toMatchObject({
          ok: true,
        });
      });

      it('frees a place when a key ends, and when a restore forgets its key', async () => {
        await gate().warm(PRODUCT, 10);
        const short = (orderId: string, key: string) =>
          capped(orderId, key, { idempotency: { key, ttlMs: 400, maxLive: 1 } });
        expect(await gate().reserve(short('o1', 'k1'))).toMatchObject({ ok: true });
        expect(await gate().reserve(short('o2', 'k2'))).toMatchObject({ reason: 'KEYS_EXHAUSTED' });
        await eventually(
          async () => expect(await gate().reserve(short('o3', 'k3'))).toMatchObject({ ok: true }),
          5_000,
          50,
        );
        expect(await gate().restore(PRODUCT, 'o3', { userId: 'alice', key: 'k3' })).toBe(true);
        expect(await gate().reserve(short('o4', 'k4'))).toMatchObject({ ok: true });
      });
    });

    describe("the buyer's lock", () => {
      const locked = (orderId: string, overrides: Partial<GateReservation> = {}) =>
        reservation(orderId, { userId: 'alice', lock: { owner: orderId, leaseMs: MINUTE }, ...overrides });

      it('refuses another attempt of the buyer on the product while a reservation holds it, taking nothing', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().warm(OTHER_PRODUCT, 5);
        expect(await gate().reserve(locked('first'))).toEqual({ ok: true, stockLeft: 4 });

        const second = await gate().reserve(locked('second'));
        expect(second).toMatchObject({ ok: false, reason: 'LOCKED' });
        expect((second as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(MINUTE - 5_000);
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
        // another buyer, or the same buyer on another product, has a lock of its own
        expect((await gate().reserve(locked('bobs', { userId: 'bob' }))).ok).toBe(true);
        expect((await gate().reserve(locked('there', { productId: OTHER_PRODUCT }))).ok).toBe(true);
      });

      it('is freed by its owner only, and then the buyer orders again', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(locked('first'));

        expect(await gate().unlock(PRODUCT, 'alice', 'someone-else')).toBe(false);
        expect(await gate().reserve(locked('second'))).toMatchObject({ reason: 'LOCKED' });
        expect(await gate().unlock(PRODUCT, 'alice', 'first')).toBe(true);
        expect(await gate().unlock(PRODUCT, 'alice', 'first')).toBe(false);
        expect(await gate().reserve(locked('second'))).toEqual({ ok: true, stockLeft: 3 });
      });

      it('frees every lock of a batch of unlocks sent together, each by its owner', async () => {
        await gate().warm(PRODUCT, 50);
        const buyers = Array.from({ length: 20 }, (_, i) => `buyer-${i}`);
        for (const userId of buyers) await gate().reserve(locked(`o-${userId}`, { userId }));

        const freed = await Promise.all(
          buyers.map((userId) => gate().unlock(PRODUCT, userId, `o-${userId}`)),
        );

        expect(freed.every(Boolean)).toBe(true);
        for (const userId of buyers)
          expect((await gate().reserve(locked(`again-${userId}`, { userId }))).ok).toBe(true);
      });

      it('is not taken by a refusal: the next attempt is answered at once', async () => {
        await gate().warm(PRODUCT, 1);
        expect(await gate().reserve(locked('big', { quantity: 2 }))).toMatchObject({ reason: 'SOLD_OUT' });
        expect(await gate().reserve(locked('over', { perUserLimit: 0 }))).toMatchObject({
          reason: 'LIMIT_EXCEEDED',
        });
        expect(await gate().reserve(locked('fits'))).toEqual({ ok: true, stockLeft: 0 });
      });

      it('ends with its lease', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(locked('first', { lock: { owner: 'first', leaseMs: 200 } }));

        await eventually(
          async () => expect((await gate().reserve(locked('second'))).ok).toBe(true),
          5_000,
          50,
        );
        expect(await gate().unlock(PRODUCT, 'alice', 'first')).toBe(false);
      });

      it('is taken by a repeat of a reservation, and a repeat while it is held waits for it', async () => {
        await gate().warm(PRODUCT, 5);
        const key = { key: 'k1', ttlMs: MINUTE };
        await gate().reserve(locked('first', { idempotency: key }));

        expect(await gate().reserve(locked('repeat', { idempotency: key }))).toMatchObject({
          reason: 'LOCKED',
        });
        await gate().unlock(PRODUCT, 'alice', 'first');
        expect(await gate().reserve(locked('repeat', { idempotency: key }))).toMatchObject({
          replayOf: 'first',
        });
        expect(await gate().reserve(locked('other'))).toMatchObject({ reason: 'LOCKED' });
        expect(await gate().unlock(PRODUCT, 'alice', 'repeat')).toBe(true);
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
      });
    });

    describe('budgets', () => {
      const budgeted = (orderId: string, overrides: Partial<GateReservation> = {}) =>
        reservation(orderId, {
          userId: 'alice',
          perUserLimit: 100,
          budgets: [
            { scope: 'address', id: '10.0.0.1', points: 3, windowMs: MINUTE },
            { scope: 'buyer', id: 'alice', points: 2, windowMs: MINUTE },
          ],
          ...overrides,
        });

      it("spends the buyer's budget: past it RATE_LIMITED until its window ends, and nothing else is done", async () => {
        await gate().warm(PRODUCT, 10);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);
        expect((await gate().reserve(budgeted('o1'))).ok).toBe(true);
        expect((await gate().reserve(budgeted('o2'))).ok).toBe(true);

        const refused = await gate().reserve(
          budgeted('o3', {
            idempotency: { key: 'k1', ttlMs: MINUTE },
            lock: { owner: 'o3', leaseMs: MINUTE },
            pathToken,
          }),
        );

        expect(refused).toMatchObject({ ok: false, reason: 'RATE_LIMITED', scope: 'buyer' });
        expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(MINUTE - 5_000);
        expect(await gate().stockLeft(PRODUCT)).toBe(8);
        // no key record, no lock, the token kept: the same request without budgets goes through as new
        expect(
          await gate().reserve(
            budgeted('o3', {
              budgets: [],
              idempotency: { key: 'k1', ttlMs: MINUTE },
              lock: { owner: 'o3', leaseMs: MINUTE },
              pathToken,
            }),
          ),
        ).toEqual({ ok: true, stockLeft: 7 });
      });

      it("spends the address's budget first, whoever the buyer", async () => {
        await gate().warm(PRODUCT, 10);
        const fromAddress = (userId: string) =>
          budgeted(`o-${userId}`, {
            userId,
            budgets: [
              { scope: 'address', id: '10.0.0.1', points: 3, windowMs: MINUTE },
              { scope: 'buyer', id: userId, points: 2, windowMs: MINUTE },
            ],
          });
        const answers = [];
        for (const userId of ['a', 'b', 'c', 'd']) answers.push(await gate().reserve(fromAddress(userId)));

        expect(answers.map((a) => (a.ok ? 'ok' : a.reason))).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
        expect(answers[3]).toMatchObject({ scope: 'address' });
        expect(await gate().stockLeft(PRODUCT)).toBe(7);
      });

      it('counts per product, and has room again once its window has passed', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().warm(OTHER_PRODUCT, 10);
        const short = (orderId: string, productId = PRODUCT) =>
          budgeted(orderId, {
            productId,
            budgets: [{ scope: 'buyer', id: 'alice', points: 1, windowMs: 300 }],
          });
        expect((await gate().reserve(short('o1'))).ok).toBe(true);
        expect(await gate().reserve(short('o2'))).toMatchObject({ reason: 'RATE_LIMITED' });
        expect((await gate().reserve(short('there', OTHER_PRODUCT))).ok).toBe(true);

        await eventually(async () => expect((await gate().reserve(short('o2'))).ok).toBe(true), 5_000, 50);
      });
    });

    describe('a sale path token', () => {
      const withToken = (orderId: string, pathToken: string, overrides: Partial<GateReservation> = {}) =>
        reservation(orderId, { userId: 'alice', pathToken, ...overrides });

      it('is used up by one attempt, for the buyer and the product it was issued to', async () => {
        await gate().warm(PRODUCT, 5);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);

        expect(await gate().reserve(withToken('o1', pathToken))).toEqual({ ok: true, stockLeft: 4 });
        expect(await gate().reserve(withToken('o2', pathToken))).toEqual({
          ok: false,
          reason: 'PATH_TOKEN_INVALID',
          redemption: 'UNKNOWN',
        });
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
      });

      it("refuses another buyer's token and leaves it for its owner", async () => {
        await gate().warm(PRODUCT, 5);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);

        expect(await gate().reserve(withToken('o1', pathToken, { userId: 'mallory' }))).toEqual({
          ok: false,
          reason: 'PATH_TOKEN_INVALID',
          redemption: 'NOT_YOURS',
        });
        expect((await gate().reserve(withToken('o2', pathToken))).ok).toBe(true);
      });

      it('knows a token only for its own product, no token it never issued, and none past its lifetime', async () => {
        await gate().warm(PRODUCT, 5);
        await gate().warm(OTHER_PRODUCT, 5);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);
        const short = await paths().issue('alice', PRODUCT, 300);

        expect(await gate().reserve(withToken('o1', pathToken, { productId: OTHER_PRODUCT }))).toMatchObject({
          redemption: 'UNKNOWN',
        });
        expect(await gate().reserve(withToken('o2', 'A'.repeat(22)))).toMatchObject({
          redemption: 'UNKNOWN',
        });
        // another buyer's try leaves a live token alone (NOT_YOURS), and finds it gone once it has expired
        await eventually(
          async () =>
            expect(
              await gate().reserve(withToken('o3', short.pathToken, { userId: 'mallory' })),
            ).toMatchObject({ redemption: 'UNKNOWN' }),
          5_000,
          50,
        );
        expect(await gate().reserve(withToken('o3', short.pathToken))).toMatchObject({
          redemption: 'UNKNOWN',
        });
        expect((await gate().reserve(withToken('o4', pathToken))).ok).toBe(true);
        expect(await gate().stockLeft(PRODUCT)).toBe(4);
      });

      it('lets exactly one of many concurrent attempts with one token through', async () => {
        await gate().warm(PRODUCT, 100);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);

        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            gate().reserve(withToken(`o${i}`, pathToken, { perUserLimit: 100 })),
          ),
        );

        expect(okCount(answers)).toBe(1);
        expect(await gate().stockLeft(PRODUCT)).toBe(99);
      });

      it('records nothing under the key and takes no lock when it refuses; a repeat answered from its key needs none', async () => {
        await gate().warm(PRODUCT, 5);
        const { pathToken } = await paths().issue('alice', PRODUCT, MINUTE);
        const attempt = (orderId: string, token: string) =>
          withToken(orderId, token, {
            idempotency: { key: 'k1', ttlMs: MINUTE },
            lock: { owner: orderId, leaseMs: MINUTE },
          });

        expect(await gate().reserve(attempt('o1', 'B'.repeat(22)))).toMatchObject({
          reason: 'PATH_TOKEN_INVALID',
        });
        expect(await gate().reserve(attempt('o2', pathToken))).toEqual({ ok: true, stockLeft: 4 });
        await gate().unlock(PRODUCT, 'alice', 'o2');
        // the repeat's token was used up by its first try: it is answered from the key
        expect(await gate().reserve(attempt('o3', pathToken))).toMatchObject({ ok: true, replayOf: 'o2' });
      });
    });

    describe('reservedBy', () => {
      it('names the buyers who reserved the product, held or given back; null past the most asked', async () => {
        await gate().warm(PRODUCT, 10);
        await gate().warm(OTHER_PRODUCT, 10);
        await gate().reserve(reservation('a', { userId: 'alice' }));
        await gate().reserve(reservation('b', { userId: 'bob' }));
        await gate().reserve(reservation('a2', { userId: 'alice' }));
        await gate().reserve(reservation('c', { userId: 'carol', productId: OTHER_PRODUCT }));
        await gate().reserve(reservation('refused', { userId: 'dave', quantity: 50 }));
        await gate().restore(PRODUCT, 'b');

        expect(await gate().reservedBy(PRODUCT, 10)).toEqual(new Set(['alice', 'bob']));
        expect(await gate().reservedBy(PRODUCT, 2)).toBeNull();
        expect(await gate().reservedBy(3, 10)).toEqual(new Set());
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

    describe('abandon (a reservation MySQL never recorded)', () => {
      const keyed = (orderId: string) =>
        reservation(orderId, {
          userId: 'buyer',
          quantity: 2,
          perUserLimit: 2,
          idempotency: { key: 'click-1', ttlMs: MINUTE, maxLive: 1 },
        });

      it("gives back its stock and the buyer's quota once; restore and a retried call of it take nothing after", async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(reservation('o1', { userId: 'buyer', quantity: 2, perUserLimit: 2 }));
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(true);
        expect(await gate().snapshot(PRODUCT)).toEqual({ stockLeft: 5, held: new Map() });
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(false);
        expect(await gate().restore(PRODUCT, 'o1')).toBe(false);
        // its orderId is spent: a retried call of it answers ok and takes nothing
        await gate().reserve(reservation('o1', { userId: 'buyer', quantity: 2, perUserLimit: 2 }));
        expect(await gate().stockLeft(PRODUCT)).toBe(5);
        // the quota came back with the unit
        expect(
          (await gate().reserve(reservation('o2', { userId: 'buyer', quantity: 2, perUserLimit: 2 }))).ok,
        ).toBe(true);
        expect(await gate().stockLeft(PRODUCT)).toBe(3);
      });

      it("leaves it held while the buyer's lock is taken: a request of the buyer may be recording it", async () => {
        await gate().warm(PRODUCT, 5);
        await gate().reserve(reservation('o1', { userId: 'buyer', lock: { owner: 'o1', leaseMs: MINUTE } }));
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(false);
        expect(await gate().held(PRODUCT)).toEqual(new Map([['o1', 1]]));
        expect(await gate().unlock(PRODUCT, 'buyer', 'o1')).toBe(true);
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(true);
        expect(await gate().stockLeft(PRODUCT)).toBe(5);
      });

      it("asks a repeat with the buyer's key afresh, as a new order, rather than answering the abandoned one", async () => {
        await gate().warm(PRODUCT, 5);
        expect(await gate().reserve(keyed('o1'))).toEqual({ ok: true, stockLeft: 3 });
        expect(await gate().reserve(keyed('retry'))).toEqual({ ok: true, stockLeft: 3, replayOf: 'o1' });
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(true);

        // the key's record pointed at a reservation given back: the repeat takes a unit of its own
        expect(await gate().reserve(keyed('o2'))).toEqual({ ok: true, stockLeft: 3 });
        expect(await gate().held(PRODUCT)).toEqual(new Map([['o2', 2]]));
        // and the key now answers with the new order, within the buyer's one live key
        expect(await gate().reserve(keyed('o3'))).toEqual({ ok: true, stockLeft: 3, replayOf: 'o2' });
      });

      it('does nothing to a restored reservation, an unknown one, or on a gate not loaded', async () => {
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(false);
        await gate().warm(PRODUCT, 5);
        await gate().reserve(reservation('o1'));
        expect(await gate().restore(PRODUCT, 'o1')).toBe(true);
        expect(await gate().abandon(PRODUCT, 'o1')).toBe(false);
        expect(await gate().abandon(PRODUCT, 'unknown')).toBe(false);
        expect(await gate().stockLeft(PRODUCT)).toBe(5);
      });
    });

    describe('snapshot', () => {
      it('reads the stock left with the reservations held: a unit the stock lacks is held, or was restored', async () => {
        expect(await gate().snapshot(PRODUCT)).toEqual({ stockLeft: null, held: new Map() });
        await gate().warm(PRODUCT, 10);
        await gate().reserve(reservation('a', { quantity: 1 }));
        await gate().reserve(reservation('b', { quantity: 2 }));
        await gate().reserve(reservation('c', { quantity: 3 }));
        await gate().restore(PRODUCT, 'b');
        expect(await gate().snapshot(PRODUCT)).toEqual({
          stockLeft: 6,
          held: new Map([
            ['a', 1],
            ['c', 3],
          ]),
        });
      });

      it('is one atomic read while buyers reserve and restore: held and stock always add up to the stock warmed', async () => {
        await gate().warm(PRODUCT, 1_000);
        const churn = (async () => {
          for (let i = 0; i < 300; i += 1) {
            await Promise.all([
              gate().reserve(reservation(`r${i}`, { quantity: 1 + (i % 3) })),
              i > 0 ? gate().restore(PRODUCT, `r${i - 1}`) : undefined,
            ]);
          }
        })();
        const totals: number[] = [];
        let done = false;
        void churn.then(() => (done = true));
        while (!done) {
          const { stockLeft, held } = await gate().snapshot(PRODUCT);
          totals.push((stockLeft ?? 0) + [...held.values()].reduce((a, b) => a + b, 0));
        }
        await churn;
        expect(totals.length).toBeGreaterThan(10);
        expect(new Set(totals)).toEqual(new Set([1_000]));
      });
    });
  });
