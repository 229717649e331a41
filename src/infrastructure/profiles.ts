import type { Container } from 'inversify';
import {
  CLOCK,
  type Clock,
  CONSUMER_LAG,
  type ConsumerLag,
  EVENT_STORE,
  type EventStore,
  HEALTH_CHECKS,
  type HealthCheck,
  type InstanceRegistry,
  INVENTORY,
  type Inventory,
  LOGGER,
  type Logger,
  MESSAGE_SUBSCRIBER,
  type MessagePublisher,
  type MessageSubscriber,
  ORDER_READ_MODEL,
  type OrderReadModel,
  OUTBOX,
  type Outbox,
  RATE_BUDGETS,
  type RateBudgets,
  type RateLimiter,
  SALE_PATHS,
  type SalePaths,
  STREAM_TICKETS,
  type StreamTickets,
  SCHEDULER,
  type Scheduler,
  SOLD_OUT_FLAGS,
  type SoldOutFlags,
  STOCK_GATE,
  type StockGate,
  UNIT_OF_WORK,
  type UnitOfWork,
} from '../application/index.js';
import { MemoryDatabase } from '../adapters/memory/memory-database.js';
import { MemoryEventStore } from '../adapters/memory/memory-event-store.js';
import { MemoryInstanceRegistry } from '../adapters/memory/memory-instance-registry.js';
import { MemoryInventory } from '../adapters/memory/memory-inventory.js';
import { MemoryMessageBus } from '../adapters/memory/memory-message-bus.js';
import { MemoryOrderReadModel } from '../adapters/memory/memory-order-read-model.js';
import { MemoryOutbox } from '../adapters/memory/memory-outbox.js';
import { MemoryRateLimiter } from '../adapters/memory/memory-rate-limiter.js';
import { MemoryScheduler } from '../adapters/memory/memory-scheduler.js';
import { MemorySalePaths } from '../adapters/memory/memory-sale-paths.js';
import { MemoryStreamTickets } from '../adapters/memory/memory-stream-tickets.js';
import { MemorySoldOutFlags, MemoryStockBackChannel } from '../adapters/memory/memory-sold-out-flags.js';
import { MemoryStockGate } from '../adapters/memory/memory-stock-gate.js';
import { MemoryUnitOfWork } from '../adapters/memory/memory-unit-of-work.js';
import { AgendaScheduler } from '../adapters/scheduler/agenda-scheduler.js';
import { KafkaMessageSubscriber } from '../adapters/kafka/kafka-message-subscriber.js';
import { MySqlEventStore } from '../adapters/mysql/mysql-event-store.js';
import { MySqlHealthCheck } from '../adapters/mysql/mysql-health-check.js';
import { MySqlInventory } from '../adapters/mysql/mysql-inventory.js';
import { MySqlOrderReadModel } from '../adapters/mysql/mysql-order-read-model.js';
import { MySqlOutbox } from '../adapters/mysql/mysql-outbox.js';
import { standaloneSession } from '../adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../adapters/mysql/mysql-unit-of-work.js';
import { RedisHealthCheck } from '../adapters/redis/redis-health-check.js';
import { RedisInstanceRegistry } from '../adapters/redis/redis-instance-registry.js';
import { RedisRateLimiter } from '../adapters/redis/redis-rate-limiter.js';
import { RedisSalePaths } from '../adapters/redis/redis-sale-paths.js';
import { RedisStreamTickets } from '../adapters/redis/redis-stream-tickets.js';
import { RedisSoldOutFlags } from '../adapters/redis/redis-sold-out-flags.js';
import { RedisStockGate } from '../adapters/redis/redis-stock-gate.js';
import type { Budget, Config } from './config.js';
import type { RealResources } from './real-resources.js';

/**
 * The two profiles of the container (container.ts): each binds every port but the process-wide ones (logger,
 * metrics, clock, ids) to its adapter. The publisher is bound as PROFILE_PUBLISHER, for an override to wrap, and
 * the instance registry as PROFILE_INSTANCE_REGISTRY, for an override to replace.
 */

/** The memory profile's tables, shared by its stores (tests read them to see that nothing was written). */
export const MEMORY_DATABASE = Symbol.for('seckill.MemoryDatabase');
/** the profile's own publisher, before an override wraps it */
export const PROFILE_PUBLISHER = Symbol.for('seckill.ProfilePublisher');
/** the profile's own instance registry, unless an override gives another (tests share one between services) */
export const PROFILE_INSTANCE_REGISTRY = Symbol.for('seckill.ProfileInstanceRegistry');
/** The memory profile's message bus: its publisher, subscriber and consumer lag (tests wait on it to go idle). */
export const MEMORY_BUS = Symbol.for('seckill.MemoryBus');

/** The configured budgets, each made by the profile's limiter; a budget of 0 points is off (null). */
const rateBudgets = (
  config: Config,
  make: (budget: Budget, name: keyof RateBudgets) => RateLimiter,
): RateBudgets => {
  const budget = (name: keyof RateBudgets, b: Budget) => (b.points > 0 ? make(b, name) : null);
  return {
    pathAddress: budget('pathAddress', config.admission.address),
    write: budget('write', config.admission.write),
    read: budget('read', config.admission.read),
  };
};

/** The memory profile: every port in process, no servers. */
export const bindMemoryProfile = (container: Container, config: Config): void => {
  container.bind<MemoryDatabase>(MEMORY_DATABASE).toResolvedValue(() => new MemoryDatabase());
  container
    .bind<EventStore>(EVENT_STORE)
    .toResolvedValue((db: MemoryDatabase) => new MemoryEventStore(db), [MEMORY_DATABASE]);
  container
    .bind<UnitOfWork>(UNIT_OF_WORK)
    .toResolvedValue((db: MemoryDatabase) => new MemoryUnitOfWork(db), [MEMORY_DATABASE]);
  container
    .bind<Inventory>(INVENTORY)
    .toResolvedValue((db: MemoryDatabase) => new MemoryInventory(db), [MEMORY_DATABASE]);
  container
    .bind<OrderReadModel>(ORDER_READ_MODEL)
    .toResolvedValue((db: MemoryDatabase) => new MemoryOrderReadModel(db), [MEMORY_DATABASE]);
  container
    .bind<Outbox>(OUTBOX)
    .toResolvedValue((db: MemoryDatabase) => new MemoryOutbox(db), [MEMORY_DATABASE]);
  // the gate uses up the path tokens the sale path issues
  container
    .bind<StockGate>(STOCK_GATE)
    .toResolvedValue(
      (clock: Clock, paths: SalePaths) => new MemoryStockGate(nowMs(clock), paths as MemorySalePaths),
      [CLOCK, SALE_PATHS],
    );
  // the marks and the path tokens keep time by the service's clock (a test moves it)
  const nowMs = (clock: Clock) => () => Date.parse(clock.now());
  container.bind<SoldOutFlags>(SOLD_OUT_FLAGS).toResolvedValue(
    (clock: Clock) =>
      new MemorySoldOutFlags(new MemoryStockBackChannel(), {
        ttlMs: config.soldOutFlagTtlMs,
        nowMs: nowMs(clock),
      }),
    [CLOCK],
  );
  container.bind<RateBudgets>(RATE_BUDGETS).toResolvedValue(() =>
    rateBudgets(
      config,
      (budget, name) =>
        new MemoryRateLimiter({
          points: budget.points,
          durationSeconds: budget.windowSeconds,
          keyPrefix: name,
        }),
    ),
  );
  container
    .bind<SalePaths>(SALE_PATHS)
    .toResolvedValue((clock: Clock) => new MemorySalePaths(nowMs(clock)), [CLOCK]);
  container
    .bind<StreamTickets>(STREAM_TICKETS)
    .toResolvedValue((clock: Clock) => new MemoryStreamTickets(nowMs(clock)), [CLOCK]);
  container
    .bind<MemoryMessageBus>(MEMORY_BUS)
    .toResolvedValue(
      (logger: Logger) =>
        new MemoryMessageBus(logger, { batchSize: config.consumerBatchSize, retryDelayMs: 50 }),
      [LOGGER],
    );
  container.bind<MessagePublisher>(PROFILE_PUBLISHER).toService(MEMORY_BUS);
  container.bind<MessageSubscriber>(MESSAGE_SUBSCRIBER).toService(MEMORY_BUS);
  container.bind<ConsumerLag>(CONSUMER_LAG).toService(MEMORY_BUS);
  container
    .bind<Scheduler>(SCHEDULER)
    .toResolvedValue((clock: Clock, logger: Logger) => new MemoryScheduler(clock, logger), [CLOCK, LOGGER]);
  container
    .bind<InstanceRegistry>(PROFILE_INSTANCE_REGISTRY)
    .toResolvedValue((clock: Clock) => new MemoryInstanceRegistry(clock), [CLOCK]);
  container.bind<readonly HealthCheck[]>(HEALTH_CHECKS).toConstantValue([]);
};

/** The real profile: Redis takes the flood, MySQL has the final word, Kafka carries the rest. */
export const bindRealProfile = (container: Container, config: Config, r: RealResources): void => {
  const ns = config.redisNamespace;
  const timeout = config.mysql.operationTimeoutMs;
  const session = standaloneSession(r.orm, timeout);
  container.bind<EventStore>(EVENT_STORE).toResolvedValue(() => new MySqlEventStore(session));
  container.bind<UnitOfWork>(UNIT_OF_WORK).toResolvedValue(() => new MySqlUnitOfWork(r.orm, timeout));
  container.bind<Inventory>(INVENTORY).toResolvedValue(() => new MySqlInventory(session));
  container.bind<OrderReadModel>(ORDER_READ_MODEL).toResolvedValue(() => new MySqlOrderReadModel(session));
  container.bind<Outbox>(OUTBOX).toResolvedValue(() => new MySqlOutbox(session));
  container.bind<StockGate>(STOCK_GATE).toResolvedValue(() => new RedisStockGate(r.redis, ns));
  container
    .bind<SoldOutFlags>(SOLD_OUT_FLAGS)
    .toResolvedValue(
      () => new RedisSoldOutFlags(r.redis, r.redisSubscriber, ns, { ttlMs: config.soldOutFlagTtlMs }),
    );
  container.bind<RateBudgets>(RATE_BUDGETS).toResolvedValue(() =>
    rateBudgets(
      config,
      (budget, name) =>
        new RedisRateLimiter(r.redis, {
          points: budget.points,
          durationSeconds: budget.windowSeconds,
          namespace: ns,
          budget: name,
        }),
    ),
  );
  container.bind<SalePaths>(SALE_PATHS).toResolvedValue(() => new RedisSalePaths(r.redis, ns));
  container.bind<StreamTickets>(STREAM_TICKETS).toResolvedValue(() => new RedisStreamTickets(r.redis, ns));
  container.bind<MessagePublisher>(PROFILE_PUBLISHER).toConstantValue(r.publisher);
  container.bind<MessageSubscriber>(MESSAGE_SUBSCRIBER).toResolvedValue(
    (logger: Logger) =>
      new KafkaMessageSubscriber(r.kafka, logger, {
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        partitionsConsumedConcurrently: config.kafka.partitionsConsumedConcurrently,
        maxBytesPerPartition: config.kafka.maxBytesPerPartition,
        minBytes: config.kafka.fetchMinBytes,
        maxWaitTimeMs: config.kafka.fetchMaxWaitMs,
        names: r.kafkaNames,
      }),
    [LOGGER],
  );
  container.bind<ConsumerLag>(CONSUMER_LAG).toConstantValue(r.consumerLag);
  container
    .bind<InstanceRegistry>(PROFILE_INSTANCE_REGISTRY)
    .toResolvedValue(() => new RedisInstanceRegistry(r.redis, ns));
  container.bind<Scheduler>(SCHEDULER).toResolvedValue(
    (logger: Logger) =>
      new AgendaScheduler(
        {
          redisUrl: config.schedulerRedisUrl,
          namespace: ns,
          lockLifetimeMs: config.schedulerLockLifetimeMs,
        },
        logger,
      ),
    [LOGGER],
  );
  container
    .bind<readonly HealthCheck[]>(HEALTH_CHECKS)
    .toConstantValue([new RedisHealthCheck(r.redis), new MySqlHealthCheck(r.healthOrm), r.kafkaHealth]);
};
