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
import { CommandHandler, type Decision, type WritePath } from './command-handler.js';
import type { EventEnvelope, OrderReadModel, OrderView } from './ports/index.js';

export type OrderDecision = Decision<OrderCommand, OrderEvent, OrderState>;
export type OrderCommands = CommandHandler<OrderCommand, OrderEvent, OrderState>;
export type ProductCommands = CommandHandler<ProductCommand, ProductEvent, ProductState>;

/** What the handlers share: the unit of work, ids and clock of the events, and the outbox's dispatcher. */
export type WriteDeps = Omit<WritePath<never, never, never>, 'projections'>;

/** Every write of the application: one command handler per aggregate, built once. */
export type CommandHandlers = Readonly<{ orders: OrderCommands; products: ProductCommands }>;

/**
 * The handlers and the inline projections registered with them: an order's events keep its `orders` row in
 * step in the same transaction. A product's stream has none: its stock is the `product` row, written by the
 * use cases as the write model it is (architecture.md says why).
 */
export const commandHandlers = (deps: WriteDeps): CommandHandlers => ({
  orders: new CommandHandler(orderDecider, (c) => orderStreamId(c.orderId), isOrderEvent, {
    ...deps,
    projections: [(stores, decisions) => projectOrders(stores.orders, decisions)],
  }),
  products: new CommandHandler(productDecider, (c) => productStreamId(c.productId), isProductEvent, {
    ...deps,
    projections: [],
  }),
});

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
