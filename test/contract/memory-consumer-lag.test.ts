import { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import { silentLogger } from '../support/contract-helpers.js';
import { consumerLagContract } from './consumer-lag.contract.js';

consumerLagContract(
  'MemoryMessageBus',
  () => {
    const bus = new MemoryMessageBus(silentLogger, { batchSize: 200, retryDelayMs: 10 });
    // one bus is the broker and every worker: a subscribe after stop resumes from the committed offset
    return Promise.resolve({ lag: bus, publisher: bus, worker: () => bus });
  },
  (fixture) => fixture.worker().stop(),
);
