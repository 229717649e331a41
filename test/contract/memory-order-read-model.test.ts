import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryOrderReadModel } from '../../src/adapters/memory/memory-order-read-model.js';
import { orderReadModelContract } from './order-read-model.contract.js';

orderReadModelContract('MemoryOrderReadModel', () =>
  Promise.resolve(new MemoryOrderReadModel(new MemoryDatabase())),
);
