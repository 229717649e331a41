import {
  MemorySoldOutFlags,
  MemoryStockBackChannel,
} from '../../src/adapters/memory/memory-sold-out-flags.js';
import { soldOutFlagsContract } from './sold-out-flags.contract.js';

soldOutFlagsContract('MemorySoldOutFlags', (marks) => {
  const channel = new MemoryStockBackChannel();
  return Promise.resolve({
    first: new MemorySoldOutFlags(channel, marks),
    second: new MemorySoldOutFlags(channel, marks),
  });
});
