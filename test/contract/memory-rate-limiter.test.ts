import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { rateLimiterContract } from './rate-limiter.contract.js';

rateLimiterContract('MemoryRateLimiter', (options) => Promise.resolve(new MemoryRateLimiter(options)));
