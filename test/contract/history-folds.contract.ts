import { describe, expect, it } from '@jest/globals';
import type { HistoryFolds } from '../../src/application/index.js';
import type { AuditedEvent, DomainEvent, ReplayOutcome } from '../../src/domain/index.js';
import { freshPerTest, type Teardown } from '../support/contract-helpers.js';
import { numbered } from '../support/histories.js';

const at = '2030-05-01T10:00:00.000Z';
const productId = 7;

export const listed = (stock: number, perUserLimit = 1): DomainEvent => ({
  type: 'ProductListed',
  data: {
    productId,
    name: 'Keyboard',
    stock,
    perUserLimit,
    maxPerOrder: 1,
    saleStartsAt: null,
    saleEndsAt: null,
    requirePathToken: false,
    listedAt: at,
  },
});

export const reserved = (n: number, reservedAt = at, userId = `buyer-${n}`): DomainEvent => ({
  type: 'OrderReserved',
  data: { orderId: `order-${n}`, productId, userId, quantity: 1, reservedAt },
});

export const committed = (n: number): DomainEvent => ({
  type: 'StockCommitted',
  data: { orderId: `order-${n}`, productId, quantity: 1, committedAt: at },
});

export const paid = (n: number): DomainEvent => ({
  type: 'OrderPaid',
  data: { orderId: `order-${n}`, paidAt: at },
});

/** `orders` buyers each reserve one unit and MySQL commits it; none has paid yet: every order is open. */
export const unpaidSale = (orders: number): AuditedEvent[] =>
  numbered([
    listed(orders),
    ...Array.from({ length: orders }, (_, n) => reserved(n)),
    ...Array.from({ length: orders }, (_, n) => committed(n)),
  ]);

/** Feeds a history page by page and finishes. */
export const foldAll = async (
  folds: HistoryFolds,
  history: readonly AuditedEvent[],
  options: Readonly<{ pageSize?: number; now?: string; staleAfterMs?: number }> = {},
): Promise<ReplayOutcome> => {
  const { pageSize = 3, now = at, staleAfterMs = 60_000 } = options;
  const fold = folds.open();
  try {
    for (let from = 0; from < history.length; from += pageSize)
      await fold.apply(history.slice(from, from + pageSize));
    return await fold.finish(now, staleAfterMs);
  } finally {
    await fold.close();
  }
};

/**
 * What the audit asks of the place its replay lives: pages folded in order into the domain's replay, the
 * outcome whole (ledgers, counts, violations, stale reservations among them), folds kept apart, and a fold
 * let go refusing more.
 */
export const historyFoldsContract = (
  name: string,
  make: () => Promise<HistoryFolds>,
  teardown?: Teardown<HistoryFolds>,
) =>
  describe(`HistoryFolds contract: ${name}`, () => {
    const folds = freshPerTest(make, teardown);

    it('folds a sale page by page into ledgers and counts, and finds it clean', async () => {
      const history = numbered([
        listed(3),
        reserved(0),
        reserved(1),
        reserved(2),
        committed(0),
        committed(1),
        paid(0),
        { type: 'StockAdded', data: { productId, quantity: 2, addedAt: at } },
      ]);

      const outcome = await foldAll(folds(), history);

      expect(outcome.eventsReplayed).toBe(history.length);
      expect(outcome.ordersByStatus).toEqual({ RESERVED: 1, COMMITTED: 1, PAID: 1 });
      expect(outcome.violations).toEqual([]);
      expect(outcome.products.get(productId)).toMatchObject({
        listed: 3,
        added: 2,
        committed: 2,
        returned: 0,
        undecided: 1,
      });
    });

    it('reports an oversell, a buyer over the limit, an illegal sequence and a stale reservation', async () => {
      const history = numbered([
        listed(1),
        reserved(0, at, 'same-buyer'),
        reserved(1, at, 'same-buyer'),
        reserved(2, '2030-05-01T09:00:00.000Z'),
        committed(0),
        committed(1),
        paid(2),
      ]);

      const outcome = await foldAll(folds(), history, { now: at, staleAfterMs: 30 * 60_000 });

      expect(outcome.violations.map((v) => v.kind).sort()).toEqual([
        'ILLEGAL_SEQUENCE',
        'OVERSOLD',
        'STALE_RESERVATION',
        'USER_LIMIT_BREACHED',
      ]);
      expect(outcome.violations.find((v) => v.kind === 'STALE_RESERVATION')).toMatchObject({
        orderId: 'order-2',
      });
      expect(outcome.products.get(productId)).toMatchObject({ committed: 2, lowestStock: -1 });
    });

    it('gives the same outcome whatever the page size', async () => {
      const history = unpaidSale(40);

      const [one, seven, all] = [
        await foldAll(folds(), history, { pageSize: 1 }),
        await foldAll(folds(), history, { pageSize: 7 }),
        await foldAll(folds(), history, { pageSize: history.length }),
      ];

      expect(seven).toEqual(one);
      expect(all).toEqual(one);
      expect(one.ordersByStatus).toEqual({ RESERVED: 0, COMMITTED: 40 });
    });

    it('keeps two folds open at once apart', async () => {
      const [a, b] = [folds().open(), folds().open()];
      try {
        await a.apply(unpaidSale(5));
        await b.apply(unpaidSale(2));

        expect((await a.finish(at, 60_000)).ordersByStatus).toEqual({ RESERVED: 0, COMMITTED: 5 });
        expect((await b.finish(at, 60_000)).ordersByStatus).toEqual({ RESERVED: 0, COMMITTED: 2 });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('refuses a page once the fold is let go', async () => {
      const fold = folds().open();
      await fold.apply(unpaidSale(1));
      await fold.close();

      await expect(fold.apply(unpaidSale(1))).rejects.toThrow(/let go/);
      await expect(fold.finish(at, 60_000)).rejects.toThrow(/let go/);
    });
  });
