import { loadConfig } from '../../src/infrastructure/config.js';
import type { ContainerOverrides } from '../../src/infrastructure/container.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { type Roles, SeckillService } from '../../src/infrastructure/service.js';
import { createTestDatabase, type TestDatabase } from './mysql-database.js';
import { dropNamespace, freshNamespace } from './redis-contracts.js';
import { startTestBroker, type TestBroker } from './kafka.js';
import { BUILT_THREADS, ONE_MACHINE } from './e2e-service.js';

export const TEST_SECRET = 'seckill-real-stack-test-secret-0123456789';

/** Settings for a broker fault drill: a send fails in 2 s, and the relay re-sends what failed within a second. */
export const BROKER_DRILL_ENV: Readonly<Record<string, string>> = {
  SECKILL_OUTBOX_RELAY_MS: '500',
  SECKILL_OUTBOX_PENDING_GRACE_MS: '1000',
  SECKILL_OUTBOX_STALE_SENT_MS: '15000',
  SECKILL_KAFKA_REQUEST_TIMEOUT_MS: '2000',
};

/** One isolated real stack: a database, a Redis namespace and a namespace of topics and groups on Kafka. */
export type RealStack = Readonly<{
  db: TestDatabase;
  broker: TestBroker;
  namespace: string;
  env: Record<string, string>;
  start: (
    roles?: Roles,
    extraEnv?: Record<string, string>,
    overrides?: ContainerOverrides,
  ) => Promise<SeckillService>;
  stop: () => Promise<void>;
}>;

export const createRealStack = async (extraEnv: Record<string, string> = {}): Promise<RealStack> => {
  const [db, broker] = await Promise.all([createTestDatabase(), startTestBroker()]);
  const namespace = freshNamespace();
  const env: Record<string, string> = {
    SECKILL_PROFILE: 'real',
    SECKILL_JWT_SECRET: TEST_SECRET,
    SECKILL_MYSQL_URL: db.url,
    SECKILL_REDIS_URL: process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    SECKILL_REDIS_NAMESPACE: namespace,
    SECKILL_KAFKA_BROKERS: broker.brokers,
    ...broker.env,
    SECKILL_KAFKA_SESSION_TIMEOUT_MS: '6000',
    SECKILL_LOG_LEVEL: 'silent',
    SECKILL_HOST: '127.0.0.1',
    PORT: '0',
    SECKILL_RATE_LIMIT_POINTS: '1000',
    ...ONE_MACHINE,
    // agenda keeps a timer of half the lock lifetime per job run; short-lived test processes want it short
    SECKILL_SCHEDULER_LOCK_LIFETIME_MS: '4000',
    ...extraEnv,
  };
  const services: SeckillService[] = [];
  return {
    db,
    broker,
    namespace,
    env,
    start: async (roles = { http: true, worker: true }, more = {}, overrides = {}) => {
      const config = loadConfig({ ...env, ...more });
      const service = await SeckillService.start(config, roles, createLogger(config.logLevel), {
        ...BUILT_THREADS,
        ...overrides,
      });
      services.push(service);
      return service;
    },
    stop: async () => {
      for (const service of services.splice(0)) await service.close();
      const { connectRedis } = await import('../../src/adapters/redis/redis-connection.js');
      const redis = connectRedis({ url: env['SECKILL_REDIS_URL']! });
      await dropNamespace(redis, namespace);
      await redis.quit();
      await broker.stop();
      await db.drop();
    },
  };
};
