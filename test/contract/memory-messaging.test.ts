import { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import { silentLogger } from '../support/contract-helpers.js';
import { messagingContract } from './messaging.contract.js';

messagingContract(
  'MemoryMessageBus',
  () => {
    const bus = new MemoryMessageBus(silentLogger, { batchSize: 200, retryDelayMs: 10 });
    return Promise.resolve({ publisher: bus, subscriber: bus, drained: () => bus.whenIdle() });
  },
  (fixture) => fixture.subscriber.stop(),
);
