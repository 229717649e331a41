import {
  decide,
  evolve,
  isOrderEvent,
  type OrderCommand,
  type OrderEvent,
  type OrderState,
  orderStreamId,
  replayOrder,
} from '../domain/index.js';
import type { EventMetadata, OrderView, TransactionalStores } from './ports/index.js';

export type LoadedOrder = Readonly<{ state: OrderState; version: number }>;

export const loadOrder = async (
  stores: Pick<TransactionalStores, 'events'>,
  orderId: string,
): Promise<LoadedOrder> => {
  const { events, version } = await stores.events.read(orderStreamId(orderId));
  return { state: replayOrder(events.filter(isOrderEvent)), version };
};

/** Several orders' streams in one read. */
export const loadOrders = async (
  stores: Pick<TransactionalStores, 'events'>,
  orderIds: readonly string[],
): Promise<Map<string, LoadedOrder>> => {
  const streams = await stores.events.readMany(orderIds.map(orderStreamId));
  const loaded = new Map<string, LoadedOrder>();
  for (const orderId of orderIds) {
    const { events, version } = streams.get(orderStreamId(orderId)) ?? { events: [], version: 0 };
    loaded.set(orderId, { state: replayOrder(events.filter(isOrderEvent)), version });
  }
  return loaded;
};

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

/** Appends what a decision produced and keeps the read model in step, inside the caller's transaction. */
export const recordOrderEvents = async (
  stores: TransactionalStores,
  loaded: LoadedOrder,
  events: readonly OrderEvent[],
  metadata: EventMetadata,
  now: string,
): Promise<OrderState> => {
  const first = events[0];
  if (!first) return loaded.state;
  const state = events.reduce(evolve, loaded.state);
  await stores.events.append(orderStreamId(first.data.orderId), events, loaded.version, metadata);
  const view = toView(state, now);
  if (view) await stores.orders.upsert(view);
  return state;
};

export type OrderDecision = Readonly<{
  loaded: LoadedOrder;
  events: readonly OrderEvent[];
  metadata: EventMetadata;
}>;

/** `recordOrderEvents` for several orders (each at most once): one append and one read-model write. */
export const recordManyOrderEvents = async (
  stores: TransactionalStores,
  decisions: readonly OrderDecision[],
  now: string,
): Promise<void> => {
  const appends = decisions.flatMap(({ loaded, events, metadata }) => {
    const first = events[0];
    return first
      ? [{ streamId: orderStreamId(first.data.orderId), events, expectedVersion: loaded.version, metadata }]
      : [];
  });
  const views = decisions.flatMap(({ loaded, events }) => {
    if (events.length === 0) return [];
    const view = toView(events.reduce(evolve, loaded.state), now);
    return view ? [view] : [];
  });
  await Promise.all([stores.events.appendMany(appends), stores.orders.upsertMany(views)]);
};

/** load → decide → append → read model, in the caller's transaction. */
export const handleOrderCommand = async (
  stores: TransactionalStores,
  command: OrderCommand,
  metadata: EventMetadata,
): Promise<{ state: OrderState; events: OrderEvent[] }> => {
  const loaded = await loadOrder(stores, command.orderId);
  const events = decide(command, loaded.state);
  const state = await recordOrderEvents(stores, loaded, events, metadata, command.now);
  return { state, events };
};
