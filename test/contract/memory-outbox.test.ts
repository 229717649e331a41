import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryOutbox } from '../../src/adapters/memory/memory-outbox.js';
import { outboxContract } from './outbox.contract.js';

outboxContract('MemoryOutbox', () => Promise.resolve(new MemoryOutbox(new MemoryDatabase())));
