import { MemorySalePaths } from '../../src/adapters/memory/memory-sale-paths.js';
import { MemoryStockGate } from '../../src/adapters/memory/memory-stock-gate.js';
import { stockGateContract } from './stock-gate.contract.js';

stockGateContract('MemoryStockGate', () => {
  const paths = new MemorySalePaths();
  return Promise.resolve({ gate: new MemoryStockGate(Date.now, paths), paths });
});
