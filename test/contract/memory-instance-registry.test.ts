import { MemoryInstanceRegistry } from '../../src/adapters/memory/memory-instance-registry.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { instanceRegistryContract } from './instance-registry.contract.js';

instanceRegistryContract('MemoryInstanceRegistry', ({ retentionMs }) =>
  Promise.resolve(new MemoryInstanceRegistry(new SystemClock(), retentionMs)),
);
