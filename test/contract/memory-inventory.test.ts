import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryInventory } from '../../src/adapters/memory/memory-inventory.js';
import { inventoryContract } from './inventory.contract.js';

inventoryContract('MemoryInventory', () => Promise.resolve(new MemoryInventory(new MemoryDatabase())));
