import { MemoryStockGate } from '../../src/adapters/memory/memory-stock-gate.js';
import { stockGateContract } from './stock-gate.contract.js';

stockGateContract('MemoryStockGate', () => Promise.resolve(new MemoryStockGate()));
