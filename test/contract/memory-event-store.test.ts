import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { eventStoreContract } from './event-store.contract.js';

const databases = new WeakMap<object, MemoryDatabase>();

eventStoreContract(
  'MemoryEventStore',
  () => {
    const db = new MemoryDatabase();
    const store = new MemoryEventStore(db);
    databases.set(store, db);
    return Promise.resolve(store);
  },
  (store, upcaster) => new MemoryEventStore(databases.get(store)!, upcaster),
);
