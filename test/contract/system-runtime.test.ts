import { RandomIdGenerator } from '../../src/adapters/system/random-id-generator.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { clockContract, idGeneratorContract } from './runtime.contract.js';

clockContract('SystemClock', () => Promise.resolve(new SystemClock()));
idGeneratorContract('RandomIdGenerator', () => Promise.resolve(new RandomIdGenerator()));
