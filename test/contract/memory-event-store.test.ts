import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { eventStoreContract } from './event-store.contract.js';

eventStoreContract('MemoryEventStore', () => Promise.resolve(new MemoryEventStore(new MemoryDatabase())));
