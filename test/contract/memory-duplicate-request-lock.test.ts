import { MemoryLock } from '../../src/adapters/memory/memory-lock.js';
import { duplicateRequestLockContract } from './duplicate-request-lock.contract.js';

duplicateRequestLockContract('MemoryLock', () => Promise.resolve(new MemoryLock()));
