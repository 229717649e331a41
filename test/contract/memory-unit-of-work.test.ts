import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { MemoryInventory } from '../../src/adapters/memory/memory-inventory.js';
import { MemoryOrderReadModel } from '../../src/adapters/memory/memory-order-read-model.js';
import { MemoryOutbox } from '../../src/adapters/memory/memory-outbox.js';
import { MemoryUnitOfWork } from '../../src/adapters/memory/memory-unit-of-work.js';
import { everyStatementInsideContract, unitOfWorkContract } from './unit-of-work.contract.js';

const fixture = () => {
  const db = new MemoryDatabase();
  return Promise.resolve({
    unitOfWork: new MemoryUnitOfWork(db),
    events: new MemoryEventStore(db),
    orders: new MemoryOrderReadModel(db),
    outbox: new MemoryOutbox(db),
    inventory: new MemoryInventory(db),
  });
};

unitOfWorkContract('MemoryUnitOfWork', fixture);
// a store writing past its transaction would queue behind the transaction that waits for it
everyStatementInsideContract('MemoryUnitOfWork', fixture);
