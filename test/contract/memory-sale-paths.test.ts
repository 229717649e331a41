import { MemorySalePaths } from '../../src/adapters/memory/memory-sale-paths.js';
import { salePathsContract } from './sale-paths.contract.js';

salePathsContract('MemorySalePaths', () => Promise.resolve(new MemorySalePaths()));
