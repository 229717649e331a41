import { redisContracts } from '../support/redis-contracts.js';

redisContracts('single Redis', () => process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
