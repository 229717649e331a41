import type { TransactionalStores, UnitOfWork } from '../../application/index.js';
import type { Journal, MemoryDatabase } from './memory-database.js';
import { MemoryEventStore } from './memory-event-store.js';
import { MemoryInventory } from './memory-inventory.js';
import { MemoryOrderReadModel } from './memory-order-read-model.js';
import { MemoryOutbox } from './memory-outbox.js';

/** One transaction at a time; a failed one is undone step by step, so nothing of it stays. */
export class MemoryUnitOfWork implements UnitOfWork {
  constructor(
    private readonly db: MemoryDatabase,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T> {
    return this.db.exclusive(async () => {
      const journal: NonNullable<Journal> = { undo: [] };
      const stores: TransactionalStores = {
        events: new MemoryEventStore(this.db, journal, this.now),
        orders: new MemoryOrderReadModel(this.db, journal),
        outbox: new MemoryOutbox(this.db, journal),
        inventory: new MemoryInventory(this.db, journal),
      };
      try {
        return await work(stores);
      } catch (error) {
        for (const undo of journal.undo.reverse()) undo();
        throw error;
      }
    });
  }
}
