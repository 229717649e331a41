import type { EventStore } from './event-store.port.js';
import type { Inventory } from './inventory.port.js';
import type { OrderReadModel } from './order-read-model.port.js';
import type { Outbox } from './outbox.port.js';

/** The stores that commit together. */
export type TransactionalStores = Readonly<{
  events: EventStore;
  orders: OrderReadModel;
  outbox: Outbox;
  inventory: Inventory;
}>;

/** Runs work in one transaction: every write commits, or none does. Never call Kafka or Redis inside. */
export interface UnitOfWork {
  run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T>;
}
