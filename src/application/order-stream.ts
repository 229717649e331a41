import {
  assertNever,
  isOrderEvent,
  isProductEvent,
  type OrderCommand,
  orderDecider,
  type OrderEvent,
  type OrderState,
  orderStreamId,
  type ProductCommand,
  productDecider,
  type ProductEvent,
  type ProductState,
  productStreamId,
} from '../domain/index.js';
import { CommandHandler, type Decision } from './command-handler.js';
import type { EventEnvelope, IdGenerator, OrderReadModel, OrderView } from './ports/index.js';

export type OrderDecision = Decision<OrderCommand, OrderEvent, OrderState>;
export type OrderCommands = CommandHandler<OrderCommand, OrderEvent, OrderState>;
export type ProductCommands = CommandHandler<ProductCommand, ProductEvent, ProductState>;

/** Every change to an order: the order decider behind the command handler, one stream per order. */
export const orderCommands = (ids: IdGenerator): OrderCommands =>
  new CommandHandler(orderDecider, (c) => orderStreamId(c.orderId), isOrderEvent, ids);

/** Every change to a product's stream. */
export const productCommands = (ids: IdGenerator): ProductCommands =>
  new CommandHandler(productDecider, (c) => productStreamId(c.productId), isProductEvent, ids);

/** An order's state as its row shows it (the seed for projecting the next events onto it). */
export const toView = (state: OrderState, updatedAt: string): OrderView | null => {
  if (state.status === 'NONE') return null;
  return {
    orderId: state.orderId,
    userId: state.userId,
    productId: state.productId,
    quantity: state.quantity,
    status: state.status,
    reason: state.status === 'RELEASED' ? state.reason : null,
    reservedAt: state.reservedAt,
    updatedAt,
  };
};

/**
 * The `orders` read model as a projection: each order event changes its order's row, and the row's
 * `updatedAt` is the time of the last event. The live service applies it inside the transaction that
 * appends the events; `RebuildProjections` applies it to the whole store in global order. Both give the
 * same rows.
 */
export const projectOrderEvent = (
  row: OrderView | null,
  envelope: EventEnvelope<OrderEvent>,
): OrderView | null => {
  const { event, occurredAt: updatedAt } = envelope;
  switch (event.type) {
    case 'OrderReserved': {
      const { orderId, userId, productId, quantity, reservedAt } = event.data;
      return {
        orderId,
        userId,
        productId,
        quantity,
        status: 'RESERVED',
        reason: null,
        reservedAt,
        updatedAt,
      };
    }
    case 'StockCommitted':
      return row && { ...row, status: 'COMMITTED', updatedAt };
    case 'ReservationReleased':
      return row && { ...row, status: 'RELEASED', reason: event.data.reason, updatedAt };
    case 'OrderPaid':
      return row && { ...row, status: 'PAID', updatedAt };
    default:
      return assertNever(event);
  }
};

/** The rows the decisions change, each projected from the order's state before them. */
export const orderRows = (decisions: readonly OrderDecision[]): OrderView[] =>
  decisions.flatMap((d) => {
    if (d.envelopes.length === 0) return [];
    const row = d.envelopes.reduce(projectOrderEvent, toView(d.before, ''));
    return row ? [row] : [];
  });

/** Keeps the `orders` projection in step with the decisions, in the caller's transaction. */
export const projectOrders = (orders: OrderReadModel, decisions: readonly OrderDecision[]): Promise<void> => {
  const rows = orderRows(decisions);
  return rows.length > 0 ? orders.upsertMany(rows) : Promise.resolve();
};
