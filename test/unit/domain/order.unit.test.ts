import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  decide,
  evolve,
  IllegalOrderTransition,
  initialOrderState,
  OrderAlreadyExists,
  OrderNotFound,
  RELEASE_REASONS,
  replayOrder,
  type OrderCommand,
  type OrderEvent,
  type OrderState,
  type ReleaseReason,
} from '../../../src/domain/index.js';
import { deciderSpecification } from '../../support/decider.js';
import {
  committedAt,
  orderId,
  orderPaid,
  orderReserved,
  paidAt,
  productId,
  releasedAt,
  reservationReleased,
  reservedAt,
  stockCommitted,
  userId,
} from './builders.js';

const given = deciderSpecification<OrderCommand, OrderEvent, OrderState>({
  decide,
  evolve,
  initialState: initialOrderState,
});

const now = '2030-05-01T11:00:00.000Z';

const reserve = (
  terms: Partial<{ productId: number; userId: string; quantity: number }> = {},
): OrderCommand => ({
  type: 'ReserveOrder',
  orderId,
  productId,
  userId,
  quantity: 2,
  now,
  ...terms,
});
const commit: OrderCommand = { type: 'CommitStock', orderId, now };
const release = (reason: ReleaseReason): OrderCommand => ({
  type: 'ReleaseReservation',
  orderId,
  reason,
  now,
});
const pay: OrderCommand = { type: 'PayOrder', orderId, now };

const reservedHistory = [orderReserved()];
const committedHistory = [orderReserved(), stockCommitted()];
const paidHistory = [orderReserved(), stockCommitted(), orderPaid()];
const releasedFromReserved = [orderReserved(), reservationReleased('CANCELLED', false)];
const releasedFromCommitted = [
  orderReserved(),
  stockCommitted(),
  reservationReleased('PAYMENT_TIMEOUT', true),
];

const everyHistory: ReadonlyArray<[string, OrderEvent[]]> = [
  ['RESERVED', reservedHistory],
  ['COMMITTED', committedHistory],
  ['PAID', paidHistory],
  ['RELEASED from RESERVED', releasedFromReserved],
  ['RELEASED from COMMITTED', releasedFromCommitted],
];

describe('Order decider', () => {
  describe('ReserveOrder', () => {
    it('reserves a new order, stamped with the command time', () => {
      given([])
        .when(reserve())
        .then([
          { type: 'OrderReserved', data: { orderId, productId, userId, quantity: 2, reservedAt: now } },
        ]);
    });

    it.each(everyHistory)('repeated with the same terms on a %s order yields nothing', (_status, history) => {
      given(history).when(reserve()).then([]);
    });

    it.each([
      ['another quantity', { quantity: 1 }],
      ['another product', { productId: productId + 1 }],
      ['another user', { userId: 'user-2' }],
    ])('with %s on an existing order is refused with OrderAlreadyExists', (_what, terms) => {
      const error = given(reservedHistory).when(reserve(terms)).thenThrows(OrderAlreadyExists);

      expect(error.orderId).toBe(orderId);
      expect(error.code).toBe('ORDER_ALREADY_EXISTS');
    });

    it('with other terms is refused even after the order was released', () => {
      given(releasedFromReserved)
        .when(reserve({ quantity: 1 }))
        .thenThrows(OrderAlreadyExists);
    });
  });

  describe('CommitStock', () => {
    it('commits a reserved order for its reserved quantity', () => {
      given([orderReserved({ quantity: 3 })])
        .when(commit)
        .then([{ type: 'StockCommitted', data: { orderId, productId, quantity: 3, committedAt: now } }]);
    });

    it.each([
      ['COMMITTED', committedHistory],
      ['PAID', paidHistory],
    ])('on a %s order yields nothing: the stock was already committed', (_status, history) => {
      given(history).when(commit).then([]);
    });

    it('on no history is refused with OrderNotFound', () => {
      const error = given([]).when(commit).thenThrows(OrderNotFound);

      expect(error.orderId).toBe(orderId);
      expect(error.code).toBe('ORDER_NOT_FOUND');
    });

    it.each([
      ['RESERVED', releasedFromReserved],
      ['COMMITTED', releasedFromCommitted],
    ])('on an order released from %s is refused with IllegalOrderTransition', (_from, history) => {
      const error = given(history).when(commit).thenThrows(IllegalOrderTransition);

      expect(error).toMatchObject({ orderId, status: 'RELEASED', command: 'CommitStock' });
      expect(error.code).toBe('ILLEGAL_ORDER_STATE');
    });
  });

  describe('ReleaseReservation', () => {
    it.each(RELEASE_REASONS)('releases a RESERVED order (%s) without committed stock', (reason) => {
      given(reservedHistory)
        .when(release(reason))
        .then([
          {
            type: 'ReservationReleased',
            data: {
              orderId,
              productId,
              userId,
              quantity: 2,
              reason,
              stockWasCommitted: false,
              releasedAt: now,
            },
          },
        ]);
    });

    it.each(RELEASE_REASONS)('releases a COMMITTED order (%s), saying the stock was committed', (reason) => {
      given(committedHistory)
        .when(release(reason))
        .then([
          {
            type: 'ReservationReleased',
            data: {
              orderId,
              productId,
              userId,
              quantity: 2,
              reason,
              stockWasCommitted: true,
              releasedAt: now,
            },
          },
        ]);
    });

    it.each(RELEASE_REASONS)('on a RELEASED order yields nothing, even for another reason (%s)', (reason) => {
      given(releasedFromReserved).when(release(reason)).then([]);
      given(releasedFromCommitted).when(release(reason)).then([]);
    });

    it('on a PAID order is refused with IllegalOrderTransition', () => {
      const error = given(paidHistory).when(release('PAYMENT_TIMEOUT')).thenThrows(IllegalOrderTransition);

      expect(error).toMatchObject({ orderId, status: 'PAID', command: 'ReleaseReservation' });
    });

    it('on no history is refused with OrderNotFound', () => {
      given([]).when(release('CANCELLED')).thenThrows(OrderNotFound);
    });
  });

  describe('PayOrder', () => {
    it('pays a committed order', () => {
      given(committedHistory)
        .when(pay)
        .then([{ type: 'OrderPaid', data: { orderId, paidAt: now } }]);
    });

    it('on a PAID order yields nothing', () => {
      given(paidHistory).when(pay).then([]);
    });

    it.each([
      ['RESERVED', 'RESERVED', reservedHistory],
      ['RELEASED from RESERVED', 'RELEASED', releasedFromReserved],
      ['RELEASED from COMMITTED', 'RELEASED', releasedFromCommitted],
    ])('on a %s order is refused with IllegalOrderTransition', (_label, status, history) => {
      const error = given(history).when(pay).thenThrows(IllegalOrderTransition);

      expect(error).toMatchObject({ orderId, status, command: 'PayOrder' });
    });

    it('on no history is refused with OrderNotFound', () => {
      given([]).when(pay).thenThrows(OrderNotFound);
    });
  });

  describe('the whole lifecycle', () => {
    it('goes RESERVED → COMMITTED → PAID, each step feeding the next', () => {
      const decideAndFold = (history: OrderEvent[], command: OrderCommand): OrderEvent[] => [
        ...history,
        ...decide(command, replayOrder(history)),
      ];

      const afterReserve = decideAndFold([], reserve());
      const afterCommit = decideAndFold(afterReserve, commit);
      const afterPay = decideAndFold(afterCommit, pay);

      expect(afterPay.map((event) => event.type)).toEqual(['OrderReserved', 'StockCommitted', 'OrderPaid']);
      expect(replayOrder(afterPay).status).toBe('PAID');
    });
  });
});

describe('Order evolve', () => {
  it('starts with no order', () => {
    expect(replayOrder([])).toEqual({ status: 'NONE' });
  });

  it('folds a reservation into RESERVED with its terms', () => {
    expect(replayOrder(reservedHistory)).toEqual({
      status: 'RESERVED',
      orderId,
      productId,
      userId,
      quantity: 2,
      reservedAt,
    });
  });

  it('folds a commit into COMMITTED with its time', () => {
    expect(replayOrder(committedHistory)).toMatchObject({ status: 'COMMITTED', reservedAt, committedAt });
  });

  it('folds a payment into PAID, keeping the commit time', () => {
    expect(replayOrder(paidHistory)).toMatchObject({ status: 'PAID', reservedAt, committedAt, paidAt });
  });

  it('folds a release from RESERVED into RELEASED with reason, flag and time', () => {
    expect(replayOrder(releasedFromReserved)).toEqual({
      status: 'RELEASED',
      orderId,
      productId,
      userId,
      quantity: 2,
      reservedAt,
      reason: 'CANCELLED',
      stockWasCommitted: false,
      releasedAt,
    });
  });

  it('folds a release from COMMITTED into RELEASED with stock that was committed', () => {
    expect(replayOrder(releasedFromCommitted)).toMatchObject({
      status: 'RELEASED',
      reason: 'PAYMENT_TIMEOUT',
      stockWasCommitted: true,
      releasedAt,
    });
  });

  it.each([
    ['a payment on a RESERVED order', reservedHistory, orderPaid()],
    ['a commit on a RELEASED order', releasedFromReserved, stockCommitted()],
    ['a release on a PAID order', paidHistory, reservationReleased('CANCELLED', true)],
    ['a payment on a RELEASED order', releasedFromCommitted, orderPaid()],
  ])('leaves the state unchanged for %s', (_what, history, stray) => {
    const state = replayOrder(history);

    expect(evolve(state, stray)).toEqual(state);
  });
});

describe('Order time', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('comes from the command, never the wall clock', () => {
    const commands: Array<[OrderEvent[], OrderCommand]> = [
      [[], reserve()],
      [reservedHistory, commit],
      [committedHistory, pay],
      [committedHistory, release('CANCELLED')],
    ];
    const decideAll = () => commands.map(([history, command]) => decide(command, replayOrder(history)));

    jest.useFakeTimers({ now: new Date('1999-12-31T23:59:59.000Z') });
    const in1999 = decideAll();
    jest.setSystemTime(new Date('2042-06-15T12:00:00.000Z'));
    const in2042 = decideAll();

    expect(in2042).toEqual(in1999);
    const [reserved, committed, paid, released] = in1999.flat();
    expect(reserved?.data).toMatchObject({ reservedAt: now });
    expect(committed?.data).toMatchObject({ committedAt: now });
    expect(paid?.data).toMatchObject({ paidAt: now });
    expect(released?.data).toMatchObject({ releasedAt: now });
  });
});
