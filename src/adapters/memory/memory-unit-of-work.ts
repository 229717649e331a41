import type { TransactionalStores, UnitOfWork } from '../../application/index.js';
import { type MemoryDatabase, MemoryTransaction } from './memory-database.js';
import { MemoryEventStore } from './memory-event-store.js';
import { MemoryInventory } from './memory-inventory.js';
import { MemoryOrderReadModel } from './memory-order-read-model.js';
import { MemoryOutbox } from './memory-outbox.js';

/**
 * One writing transaction at a time. Its writes stay aside until it commits, so readers never see them
 * early, and a failed transaction leaves nothing behind.
 */
export class MemoryUnitOfWork implements UnitOfWork {
  constructor(private readonly db: MemoryDatabase) {}

  run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T> {
    return this.db.exclusive(async () => {
      const transaction = new MemoryTransaction(this.db);
      const result = await work({
        events: new MemoryEventStore(transaction),
        orders: new MemoryOrderReadModel(transaction),
        outbox: new MemoryOutbox(transaction),
        inventory: new MemoryInventory(transaction),
      });
      transaction.commit();
      return result;
    });
  }
}
