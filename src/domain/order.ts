import { IllegalOrderTransition, InvalidOrderQuantity, OrderAlreadyExists, OrderNotFound } from './errors.js';
import type { Decider } from './decider.js';
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
/** `requestedBy`: the buyer asking; absent when the service itself acts (a timeout, the commit consumer). */
export type ReleaseReservation = Readonly<{
  type: 'ReleaseReservation';
  orderId: string;
  reason: ReleaseReason;
  now: string;
  requestedBy?: string;
}>;
export type PayOrder = Readonly<{ type: 'PayOrder'; orderId: string; now: string; requestedBy?: string }>;

export type OrderCommand = ReserveOrder | CommitStock | ReleaseReservation | PayOrder;

/**
 * The one table of legal transitions: the state an event leads to, or null when the event cannot follow this
 * state. `decide` refuses a command whose event would not follow, `evolve` folds with it, and the audit
 * flags a stored event it rejects.
 */
export const transition = (state: OrderState, event: OrderEvent): OrderState | null => {
  switch (event.type) {
    case 'OrderReserved':
      return state.status === 'NONE' ? { status: 'RESERVED', ...event.data } : null;
    case 'StockCommitted':
      if (state.status !== 'RESERVED') return null;
      return { ...state, status: 'COMMITTED', committedAt: event.data.committedAt };
    case 'ReservationReleased':
      if (state.status !== 'RESERVED' && state.status !== 'COMMITTED') return null;
      // the event must say truly whether MySQL had committed the stock it gives back
      if (event.data.stockWasCommitted !== (state.status === 'COMMITTED')) return null;
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
      if (state.status !== 'COMMITTED') return null;
      return { ...state, status: 'PAID', paidAt: event.data.paidAt };
    default:
      return assertNever(event);
  }
};

/** Folds an event into the state; an event that cannot follow leaves the state as it was. */
export const evolve = (state: OrderState, event: OrderEvent): OrderState => transition(state, event) ?? state;

export const replayOrder = (events: readonly OrderEvent[]): OrderState =>
  events.reduce(evolve, initialOrderState);

/** An order is for at least one whole unit. */
export const assertOrderQuantity = (quantity: number): void => {
  if (!Number.isSafeInteger(quantity) || quantity < 1) throw new InvalidOrderQuantity(quantity);
};

/** Only the buyer who placed an order sees it or acts on it: to anybody else it does not exist. */
export const assertVisibleTo = (
  order: Readonly<{ userId: string }> | null,
  userId: string | undefined,
  orderId: string,
): void => {
  if (!order || (userId !== undefined && order.userId !== userId)) throw new OrderNotFound(orderId);
};

/** The decided event, if it may follow the state; else the command is refused. */
const follows = (state: OrderState, command: OrderCommand, event: OrderEvent): OrderEvent[] => {
  if (transition(state, event) === null)
    throw new IllegalOrderTransition(command.orderId, state.status, command.type);
  return [event];
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
  if (state.status === 'NONE') throw new OrderNotFound(cmd.orderId);
  if (state.status === 'COMMITTED' || state.status === 'PAID') return []; // already took effect
  const { orderId, productId, quantity } = state;
  return follows(state, cmd, {
    type: 'StockCommitted',
    data: { orderId, productId, quantity, committedAt: cmd.now },
  });
};

const release = (cmd: ReleaseReservation, state: OrderState): OrderEvent[] => {
  if (state.status === 'NONE') throw new OrderNotFound(cmd.orderId);
  assertVisibleTo(state, cmd.requestedBy, cmd.orderId);
  if (state.status === 'RELEASED') return [];
  const { orderId, productId, userId, quantity } = state;
  return follows(state, cmd, {
    type: 'ReservationReleased',
    data: {
      orderId,
      productId,
      userId,
      quantity,
      reason: cmd.reason,
      stockWasCommitted: state.status === 'COMMITTED',
      releasedAt: cmd.now,
    },
  });
};

const pay = (cmd: PayOrder, state: OrderState): OrderEvent[] => {
  if (state.status === 'NONE') throw new OrderNotFound(cmd.orderId);
  assertVisibleTo(state, cmd.requestedBy, cmd.orderId);
  if (state.status === 'PAID') return [];
  return follows(state, cmd, { type: 'OrderPaid', data: { orderId: state.orderId, paidAt: cmd.now } });
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

/** The order aggregate. */
export const orderDecider: Decider<OrderCommand, OrderEvent, OrderState> = {
  decide,
  evolve,
  initialState: initialOrderState,
};
