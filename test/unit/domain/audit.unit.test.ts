import { describe, expect, it } from '@jest/globals';
import {
  ledgerStock,
  orderStreamId,
  HistoryReplay,
  replayHistory,
  staleReservations,
  storeDrift,
  type AuditedEvent,
  type DomainEvent,
  type StoreObservation,
  type Violation,
} from '../../../src/domain/index.js';
import {
  orderPaid,
  orderReserved,
  productId,
  productListed,
  reservationReleased,
  reservedAt,
  stockAdded,
  stockCommitted,
  stockReconciled,
} from './builders.js';
import { numbered } from '../../support/histories.js';

const history = (...events: DomainEvent[]): AuditedEvent[] => numbered(events);

const kindsAndPositions = (violations: readonly Violation[]) =>
  violations.map(({ kind, position }) => ({ kind, position }));

/** An order's lifecycle events, all about one order of one user. */
const order = (orderId: string, quantity: number, userId = 'user-1') => ({
  reserved: orderReserved({ orderId, quantity, userId }),
  committed: stockCommitted({ orderId, quantity }),
  paid: orderPaid({ orderId }),
  releasedUncommitted: reservationReleased('SOLD_OUT', false, { orderId, quantity, userId }),
  releasedCommitted: reservationReleased('PAYMENT_TIMEOUT', true, { orderId, quantity, userId }),
});

describe('audit replay of a clean history', () => {
  const paidOrder = order('paid', 2, 'user-1');
  const timedOut = order('timed-out', 2, 'user-2');
  const soldOut = order('sold-out', 1, 'user-3');
  const pending = order('pending', 2, 'user-4');
  const replay = replayHistory(
    history(
      productListed({ stock: 5, perUserLimit: 2 }),
      paidOrder.reserved,
      paidOrder.committed,
      paidOrder.paid,
      stockAdded({ quantity: 3 }),
      timedOut.reserved,
      timedOut.committed,
      timedOut.releasedCommitted,
      soldOut.reserved,
      soldOut.releasedUncommitted,
      pending.reserved,
      stockReconciled(),
    ),
  );

  it('finds no violations', () => {
    expect(replay.violations).toEqual([]);
  });

  it('counts every event', () => {
    expect(replay.eventsReplayed).toBe(12);
  });

  it('keeps a ledger of listed, added, committed, returned and undecided units', () => {
    expect(replay.products.get(productId)).toEqual({
      productId,
      perUserLimit: 2,
      listed: 5,
      added: 3,
      committed: 4,
      returned: 2,
      undecided: 2,
      lowestStock: 3, // 5 listed − 2 paid, before the restock
    });
  });

  it('derives the stock MySQL should hold', () => {
    const ledger = replay.products.get(productId);

    expect(ledger && ledgerStock(ledger)).toBe(5 + 3 - 4 + 2);
  });

  it('counts every order by its final state and keeps only the open one', () => {
    expect(replay.ordersByStatus).toEqual({ PAID: 1, RELEASED: 2, RESERVED: 1, COMMITTED: 0 });
    expect([...replay.openOrders.keys()]).toEqual(['pending']);
  });
});

describe('audit replay: oversell', () => {
  it('reports OVERSOLD at the commit that takes stock below zero, and at none before', () => {
    const first = order('first', 2);
    const second = order('second', 2, 'user-2');

    const replay = replayHistory(
      history(
        productListed({ stock: 3 }),
        first.reserved,
        second.reserved,
        first.committed,
        second.committed,
      ),
    );

    expect(replay.violations).toEqual([
      expect.objectContaining({ kind: 'OVERSOLD', position: 5, productId, orderId: 'second' }),
    ]);
    expect(replay.products.get(productId)?.lowestStock).toBe(-1);
  });

  it('counts restocks and returned units before calling a commit oversold', () => {
    const first = order('first', 2);
    const second = order('second', 2, 'user-2');
    const third = order('third', 2, 'user-3');

    const replay = replayHistory(
      history(
        productListed({ stock: 2 }),
        first.reserved,
        first.committed,
        first.releasedCommitted,
        second.reserved,
        second.committed,
        stockAdded({ quantity: 2 }),
        third.reserved,
        third.committed,
      ),
    );

    expect(replay.violations).toEqual([]);
    expect(replay.products.get(productId)?.lowestStock).toBe(0);
  });
});

describe('audit replay: illegal sequences', () => {
  const one = order('order-1', 2);

  it.each<[string, DomainEvent[], number]>([
    ['a commit before the reservation', [productListed(), one.committed], 2],
    ['a second commit', [productListed(), one.reserved, one.committed, one.committed], 4],
    ['a payment on a released order', [productListed(), one.reserved, one.releasedUncommitted, one.paid], 4],
    ['a payment on a reserved order', [productListed(), one.reserved, one.paid], 3],
    [
      'a release from RESERVED claiming committed stock',
      [productListed(), one.reserved, one.releasedCommitted],
      3,
    ],
    [
      'a release from COMMITTED denying committed stock',
      [productListed(), one.reserved, one.committed, one.releasedUncommitted],
      4,
    ],
    ['a second reservation of one order', [productListed(), one.reserved, one.reserved], 3],
    [
      'a release of a paid order',
      [productListed(), one.reserved, one.committed, one.paid, one.releasedCommitted],
      5,
    ],
    ['a reservation for an unlisted product', [one.reserved], 1],
    ['a restock of an unlisted product', [stockAdded()], 1],
    ['a reconciliation of an unlisted product', [stockReconciled()], 1],
    ['a second listing', [productListed(), productListed({ stock: 99 })], 2],
  ])('reports %s as ILLEGAL_SEQUENCE at its position', (_what, events, position) => {
    const replay = replayHistory(history(...events));

    expect(kindsAndPositions(replay.violations)).toEqual([{ kind: 'ILLEGAL_SEQUENCE', position }]);
  });

  it('names the order of an illegal order event', () => {
    const replay = replayHistory(history(productListed(), one.committed));

    expect(replay.violations[0]).toMatchObject({ orderId: 'order-1' });
  });

  it('names the product of an event for an unlisted product', () => {
    const replay = replayHistory(history(stockAdded({ productId: 42 })));

    expect(replay.violations[0]).toMatchObject({ productId: 42 });
  });

  it('does not let an illegal event move stock', () => {
    const replay = replayHistory(
      history(productListed({ stock: 10 }), one.reserved, one.committed, one.committed),
    );

    expect(replay.products.get(productId)).toMatchObject({ committed: 2, undecided: 0 });
  });

  it('keeps the first listing when a product is listed twice', () => {
    const replay = replayHistory(history(productListed({ stock: 10 }), productListed({ stock: 99 })));

    expect(replay.products.get(productId)?.listed).toBe(10);
  });
});

describe('audit replay: per-user limit', () => {
  const listedWithLimit2 = productListed({ stock: 100, perUserLimit: 2 });

  it('reports USER_LIMIT_BREACHED at the commit that takes a user over the limit', () => {
    const first = order('first', 2);
    const second = order('second', 1);

    const replay = replayHistory(
      history(listedWithLimit2, first.reserved, first.committed, second.reserved, second.committed),
    );

    expect(replay.violations).toEqual([
      expect.objectContaining({ kind: 'USER_LIMIT_BREACHED', position: 5, productId, orderId: 'second' }),
    ]);
  });

  it('allows a user to buy again once a release returned the units', () => {
    const first = order('first', 2);
    const second = order('second', 2);

    const replay = replayHistory(
      history(
        listedWithLimit2,
        first.reserved,
        first.committed,
        first.releasedCommitted,
        second.reserved,
        second.committed,
      ),
    );

    expect(replay.violations).toEqual([]);
  });

  it('counts each user on their own', () => {
    const mine = order('mine', 2, 'user-1');
    const theirs = order('theirs', 2, 'user-2');

    const replay = replayHistory(
      history(listedWithLimit2, mine.reserved, mine.committed, theirs.reserved, theirs.committed),
    );

    expect(replay.violations).toEqual([]);
  });

  it('counts each product on its own', () => {
    const keyboard = order('keyboard', 2);
    const mouse = {
      reserved: orderReserved({ orderId: 'mouse', productId: 8 }),
      committed: stockCommitted({ orderId: 'mouse', productId: 8 }),
    };

    const replay = replayHistory(
      history(
        listedWithLimit2,
        productListed({ productId: 8, perUserLimit: 2 }),
        keyboard.reserved,
        keyboard.committed,
        mouse.reserved,
        mouse.committed,
      ),
    );

    expect(replay.violations).toEqual([]);
  });
});

describe('stale reservations', () => {
  const staleAfterMs = 60_000;
  const reservedMs = Date.parse(reservedAt);
  const at = (offsetMs: number) => new Date(reservedMs + offsetMs).toISOString();

  const waiting = order('waiting', 1);
  const committed = order('committed', 1);
  const released = order('released', 1);
  const replay = replayHistory(
    history(
      productListed(),
      waiting.reserved,
      committed.reserved,
      committed.committed,
      released.reserved,
      released.releasedUncommitted,
    ),
  );

  it('reports a RESERVED order older than the threshold, and no decided order', () => {
    expect(staleReservations(replay, at(staleAfterMs + 1), staleAfterMs)).toEqual([
      expect.objectContaining({ kind: 'STALE_RESERVATION', orderId: 'waiting', productId }),
    ]);
  });

  it('does not report a reservation exactly as old as the threshold', () => {
    expect(staleReservations(replay, at(staleAfterMs), staleAfterMs)).toEqual([]);
  });

  it('does not report a fresh reservation', () => {
    expect(staleReservations(replay, at(1_000), staleAfterMs)).toEqual([]);
  });
});

describe('store drift', () => {
  // Ledger: 10 listed, 2 committed, 3 undecided → MySQL 8, gate 8 − 3 − releasedNotRestored.
  const committed = order('committed', 2);
  const pending = order('pending', 3, 'user-2');
  const replay = replayHistory(
    history(productListed({ stock: 10 }), committed.reserved, committed.committed, pending.reserved),
  );

  const observed = (seen: Partial<StoreObservation>): StoreObservation => ({
    productId,
    mysqlStock: 8,
    gateStock: 4,
    releasedNotRestored: 1,
    ...seen,
  });

  it('reports nothing when MySQL and the gate agree with the replay', () => {
    expect(storeDrift(replay, [observed({})])).toEqual([]);
  });

  it('reports MYSQL_STOCK_DRIFT when MySQL disagrees with the replayed stock', () => {
    expect(storeDrift(replay, [observed({ mysqlStock: 7 })])).toEqual([
      expect.objectContaining({ kind: 'MYSQL_STOCK_DRIFT', productId }),
    ]);
  });

  it('reports GATE_STOCK_DRIFT when the gate disagrees with stock less undecided and unrestored units', () => {
    const drift = storeDrift(replay, [observed({ gateStock: 5 })]);

    expect(drift).toEqual([expect.objectContaining({ kind: 'GATE_STOCK_DRIFT', productId })]);
    expect(drift[0]?.detail).toContain('expected 4');
  });

  it('expects more in the gate once released units are restored', () => {
    expect(storeDrift(replay, [observed({ gateStock: 5, releasedNotRestored: 0 })])).toEqual([]);
  });

  it('reports both drifts at once', () => {
    const kinds = storeDrift(replay, [observed({ mysqlStock: 9, gateStock: 9 })]).map(({ kind }) => kind);

    expect(kinds).toEqual(['MYSQL_STOCK_DRIFT', 'GATE_STOCK_DRIFT']);
  });

  it('does not judge a gate that is not loaded, nor a MySQL row that was not read', () => {
    expect(storeDrift(replay, [observed({ gateStock: null, mysqlStock: null })])).toEqual([]);
    expect(
      storeDrift(replay, [observed({ gateStock: null, mysqlStock: 7 })]).map(({ kind }) => kind),
    ).toEqual(['MYSQL_STOCK_DRIFT']);
  });
});

describe('audit replay: a finished order is let go, not forgotten', () => {
  it('flags an event on a paid order by its stream version', () => {
    const paid = order('paid', 1);
    const events = history(productListed(), paid.reserved, paid.committed, paid.paid);
    const again: AuditedEvent = {
      position: 5,
      streamId: orderStreamId('paid'),
      streamVersion: 4,
      event: paid.reserved,
    };

    const replay = replayHistory([...events, again]);

    expect(replay.openOrders.size).toBe(0);
    expect(kindsAndPositions(replay.violations)).toEqual([{ kind: 'ILLEGAL_SEQUENCE', position: 5 }]);
  });

  it('keeps memory to the open orders while a long history streams through', () => {
    const replay = new HistoryReplay();
    replay.apply(history(productListed({ stock: 1_000_000, perUserLimit: 1 }))[0]!);
    let position = 1;
    let peak = 0;
    for (let i = 0; i < 5_000; i += 1) {
      const o = order(`o-${i}`, 1, `user-${i}`);
      for (const [v, event] of [o.reserved, o.releasedUncommitted].entries()) {
        replay.apply({
          position: (position += 1),
          streamId: orderStreamId(`o-${i}`),
          streamVersion: v + 1,
          event,
        });
        peak = Math.max(peak, replay.retained);
      }
    }

    expect(peak).toBe(1);
    expect(replay.result().ordersByStatus).toEqual({ RESERVED: 0, RELEASED: 5_000 });
  });
});
