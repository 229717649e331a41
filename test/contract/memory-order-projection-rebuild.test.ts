import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryOrderReadModel } from '../../src/adapters/memory/memory-order-read-model.js';
import { MemoryOrderProjectionRebuild } from '../../src/adapters/memory/memory-projection-rebuild.js';
import { orderProjectionRebuildContract } from './order-projection-rebuild.contract.js';

orderProjectionRebuildContract('MemoryOrderProjectionRebuild', () => {
  const db = new MemoryDatabase();
  return Promise.resolve({
    target: new MemoryOrderProjectionRebuild(db),
    live: new MemoryOrderReadModel(db),
  });
});
