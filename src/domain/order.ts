import {
  DomainError,
  IllegalOrderTransition,
  InvalidOrderQuantity,
  OrderAlreadyExists,
  OrderNotFound,
} from './errors.js';
import { assertNever, type OrderEvent, type ReleaseReason } from './events.js';

export type OrderStatus = 'RESERVED' | 'COMMITTED' | 'PAID' | 'RELEASED';

type OrderTerms = Readonly<{
  orderId: string;
  productId: number;
  userId: string;
  quantity: number;
  reservedAt: string;
}>;

/** State is a union keyed on `status`; each status carries only what it can know. */
export type OrderState =
  | Readonly<{ status: 'NONE' }>
  | (OrderTerms & Readonly<{ status: 'RESERVED' }>)
  | (OrderTerms & Readonly<{ status: 'COMMITTED'; committedAt: string }>)
  | (OrderTerms & Readonly<{ status: 'PAID'; committedAt: string; paidAt: string }>)
  | (OrderTerms &
      Readonly<{
        status: 'RELEASED';
        reason: ReleaseReason;
        stockWasCommitted: boolean;
        releasedAt: string;
      }>);

export const initialOrderState: OrderState = { status: 'NONE' };

export type ReserveOrder = Readonly<{
  type: 'ReserveOrder';
  orderId: string;
  productId: number;
  userId: string;
  quantity: number;
  now: string;
}>;
export type CommitStock = Readonly<{ type: 'CommitStock'; orderId: string; now: string }>;
export type ReleaseReservation = Readonly<{
  type: 'ReleaseReservation';
  orderId: string;
  reason: ReleaseReason;
  now: string;
}>;
export type PayOrder = Readonly<{ type: 'PayOrder'; orderId: string; now: string }>;

export type OrderCommand = ReserveOrder | CommitStock | ReleaseReservation | PayOrder;

export const evolve = (state: OrderState, event: OrderEvent): OrderState => {
  switch (event.type) {
    case 'OrderReserved':
      if (state.status !== 'NONE') return state;
      return { status: 'RESERVED', ...event.data };
    case 'StockCommitted':
      if (state.status !== 'RESERVED') return state;
      return { ...state, status: 'COMMITTED', committedAt: event.data.committedAt };
    case 'ReservationReleased':
      if (state.status !== 'RESERVED' && state.status !== 'COMMITTED') return state;
      return {
        orderId: state.orderId,
        productId: state.productId,
        userId: state.userId,
        quantity: state.quantity,
        reservedAt: state.reservedAt,
        status: 'RELEASED',
        reason: event.data.reason,
        stockWasCommitted: event.data.stockWasCommitted,
        releasedAt: event.data.releasedAt,
      };
    case 'OrderPaid':
      if (state.status !== 'COMMITTED') return state;
      return { ...state, status: 'PAID', paidAt: event.data.paidAt };
    default:
      return assertNever(event);
  }
};

export const replayOrder = (events: readonly OrderEvent[]): OrderState =>
  events.reduce(evolve, initialOrderState);

/** An order is for at least one whole unit. */
export const assertOrderQuantity = (quantity: number): void => {
  if (!Number.isSafeInteger(quantity) || quantity < 1) throw new InvalidOrderQuantity(quantity);
};

const reserve = (cmd: ReserveOrder, state: OrderState): OrderEvent[] => {
  if (state.status !== 'NONE') {
    const sameTerms =
      state.productId === cmd.productId && state.userId === cmd.userId && state.quantity === cmd.quantity;
    if (sameTerms) return []; // the reservation already took effect
    throw new OrderAlreadyExists(cmd.orderId);
  }
  assertOrderQuantity(cmd.quantity);
  const { orderId, productId, userId, quantity, now } = cmd;
  return [{ type: 'OrderReserved', data: { orderId, productId, userId, quantity, reservedAt: now } }];
};

const commit = (cmd: CommitStock, state: OrderState): OrderEvent[] => {
  switch (state.status) {
    case 'NONE':
      throw new OrderNotFound(cmd.orderId);
    case 'COMMITTED':
    case 'PAID':
      return [];
    case 'RELEASED':
      throw new IllegalOrderTransition(cmd.orderId, state.status, cmd.type);
    case 'RESERVED':
      return [
        {
          type: 'StockCommitted',
          data: {
            orderId: state.orderId,
            productId: state.productId,
            quantity: state.quantity,
            committedAt: cmd.now,
          },
        },
      ];
    default:
      return assertNever(state);
  }
};

const release = (cmd: ReleaseReservation, state: OrderState): OrderEvent[] => {
  switch (state.status) {
    case 'NONE':
      throw new OrderNotFound(cmd.orderId);
    case 'RELEASED':
      return [];
    case 'PAID':
      throw new IllegalOrderTransition(cmd.orderId, state.status, cmd.type);
    case 'RESERVED':
    case 'COMMITTED':
      return [
        {
          type: 'ReservationReleased',
          data: {
            orderId: state.orderId,
            productId: state.productId,
            userId: state.userId,
            quantity: state.quantity,
            reason: cmd.reason,
            stockWasCommitted: state.status === 'COMMITTED',
            releasedAt: cmd.now,
          },
        },
      ];
    default:
      return assertNever(state);
  }
};

const pay = (cmd: PayOrder, state: OrderState): OrderEvent[] => {
  switch (state.status) {
    case 'NONE':
      throw new OrderNotFound(cmd.orderId);
    case 'PAID':
      return [];
    case 'RESERVED':
    case 'RELEASED':
      throw new IllegalOrderTransition(cmd.orderId, state.status, cmd.type);
    case 'COMMITTED':
      return [{ type: 'OrderPaid', data: { orderId: state.orderId, paidAt: cmd.now } }];
    default:
      return assertNever(state);
  }
};

/** Turns a command and the current state into new events, or throws a typed domain error. */
export const decide = (cmd: OrderCommand, state: OrderState): OrderEvent[] => {
  switch (cmd.type) {
    case 'ReserveOrder':
      return reserve(cmd, state);
    case 'CommitStock':
      return commit(cmd, state);
    case 'ReleaseReservation':
      return release(cmd, state);
    case 'PayOrder':
      return pay(cmd, state);
    default:
      return assertNever(cmd);
  }
};

export const isDomainError = (error: unknown): error is DomainError => error instanceof DomainError;
