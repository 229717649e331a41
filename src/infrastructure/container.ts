import 'reflect-metadata';
import { Container, type ServiceIdentifier } from 'inversify';
import {
  AuditHistory,
  CLOCK,
  type Clock,
  CommitReservations,
  type MessagePublisher,
  CompensateReservation,
  DUPLICATE_REQUEST_LOCK,
  EVENT_STORE,
  CONSUMER_LAG,
  HEALTH_CHECKS,
  type HealthCheck,
  ID_GENERATOR,
  INVENTORY,
  LOGGER,
  ManageProducts,
  MESSAGE_PUBLISHER,
  MESSAGE_SUBSCRIBER,
  METRICS,
  ORDER_READ_MODEL,
  OUTBOX,
  OutboxDispatcher,
  PayOrder,
  PlaceOrder,
  ProductCatalog,
  Queries,
  SaleDashboard,
  RATE_LIMITER,
  ReconcileStock,
  RelayOutbox,
  ReleaseOrder,
  SCHEDULER,
  SOLD_OUT_FLAGS,
  STOCK_GATE,
  UNIT_OF_WORK,
} from '../application/index.js';
import { JwtTokens } from '../adapters/http/tokens.js';
import { MemoryDatabase } from '../adapters/memory/memory-database.js';
import { MemoryEventStore } from '../adapters/memory/memory-event-store.js';
import { MemoryInventory } from '../adapters/memory/memory-inventory.js';
import { MemoryLock } from '../adapters/memory/memory-lock.js';
import { MemoryMessageBus } from '../adapters/memory/memory-message-bus.js';
import { MemoryOrderReadModel } from '../adapters/memory/memory-order-read-model.js';
import { MemoryOutbox } from '../adapters/memory/memory-outbox.js';
import { MemoryRateLimiter } from '../adapters/memory/memory-rate-limiter.js';
import { MemoryScheduler } from '../adapters/memory/memory-scheduler.js';
import { MemorySoldOutFlags } from '../adapters/memory/memory-sold-out-flags.js';
import { MemoryStockGate } from '../adapters/memory/memory-stock-gate.js';
import { MemoryUnitOfWork } from '../adapters/memory/memory-unit-of-work.js';
import { RandomIdGenerator } from '../adapters/system/random-id-generator.js';
import { SystemClock } from '../adapters/system/system-clock.js';
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
import { RedisLock } from '../adapters/redis/redis-lock.js';
import { RedisRateLimiter } from '../adapters/redis/redis-rate-limiter.js';
import { RedisSoldOutFlags } from '../adapters/redis/redis-sold-out-flags.js';
import { RedisStockGate } from '../adapters/redis/redis-stock-gate.js';
import { type Config, ConfigError } from './config.js';
import type { RealResources } from './real-resources.js';
import type { AppLogger } from './logger.js';
import { PrometheusMetrics } from './metrics.js';

/** Identifiers of what the container builds beyond the ports. */
export const TYPES = {
  Config: Symbol.for('seckill.Config'),
  Tokens: Symbol.for('seckill.Tokens'),
  PrometheusMetrics: Symbol.for('seckill.PrometheusMetrics'),
  MemoryBus: Symbol.for('seckill.MemoryBus'),
  MemoryDatabase: Symbol.for('seckill.MemoryDatabase'),
  Catalog: Symbol.for('seckill.ProductCatalog'),
  Dispatcher: Symbol.for('seckill.OutboxDispatcher'),
  PlaceOrder: Symbol.for('seckill.PlaceOrder'),
  CommitReservations: Symbol.for('seckill.CommitReservations'),
  CompensateReservation: Symbol.for('seckill.CompensateReservation'),
  ReleaseOrder: Symbol.for('seckill.ReleaseOrder'),
  PayOrder: Symbol.for('seckill.PayOrder'),
  RelayOutbox: Symbol.for('seckill.RelayOutbox'),
  ReconcileStock: Symbol.for('seckill.ReconcileStock'),
  AuditHistory: Symbol.for('seckill.AuditHistory'),
  ManageProducts: Symbol.for('seckill.ManageProducts'),
  Queries: Symbol.for('seckill.Queries'),
  SaleDashboard: Symbol.for('seckill.SaleDashboard'),
} as const;

export type ContainerOverrides = Readonly<{
  clock?: Clock;
  /** wraps the profile's publisher (fault drills deliver every message twice through this) */
  publisher?: (inner: MessagePublisher) => MessagePublisher;
}>;

/** The real profile: Redis takes the flood, MySQL has the final word, Kafka carries the rest. */
const bindRealProfile = (
  container: Container,
  config: Config,
  r: RealResources,
  overrides: ContainerOverrides,
): void => {
  const ns = config.redisNamespace;
  const timeout = config.mysql.operationTimeoutMs;
  const clockNow = (get: <U>(id: ServiceIdentifier<U>) => U) => () => get<Clock>(CLOCK).now();
  const session = standaloneSession(r.orm, timeout);
  singleton(container, EVENT_STORE, () => new MySqlEventStore(session));
  container.bind(INVENTORY).toConstantValue(new MySqlInventory(session));
  container.bind(ORDER_READ_MODEL).toConstantValue(new MySqlOrderReadModel(session));
  container.bind(OUTBOX).toConstantValue(new MySqlOutbox(session));
  singleton(container, UNIT_OF_WORK, (get) => new MySqlUnitOfWork(r.orm, timeout, clockNow(get)));
  container.bind(STOCK_GATE).toConstantValue(new RedisStockGate(r.redis, ns));
  container
    .bind(DUPLICATE_REQUEST_LOCK)
    .toConstantValue(new RedisLock(r.redis, r.redisSubscriber, { namespace: ns }));
  container.bind(SOLD_OUT_FLAGS).toConstantValue(new RedisSoldOutFlags(r.redis, r.redisSubscriber, ns));
  container.bind(RATE_LIMITER).toConstantValue(
    new RedisRateLimiter(r.redis, {
      points: config.rateLimit.points,
      durationSeconds: config.rateLimit.windowSeconds,
      namespace: ns,
    }),
  );
  container
    .bind(MESSAGE_PUBLISHER)
    .toConstantValue(overrides.publisher ? overrides.publisher(r.publisher) : r.publisher);
  singleton(
    container,
    MESSAGE_SUBSCRIBER,
    (get) =>
      new KafkaMessageSubscriber(r.kafka, get(LOGGER), {
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        partitionsConsumedConcurrently: config.kafka.partitionsConsumedConcurrently,
        maxBytesPerPartition: config.kafka.maxBytesPerPartition,
        minBytes: config.kafka.fetchMinBytes,
        maxWaitTimeMs: config.kafka.fetchMaxWaitMs,
        names: r.kafkaNames,
      }),
  );
  singleton(
    container,
    SCHEDULER,
    (get) =>
      new AgendaScheduler(
        { redisUrl: config.schedulerRedisUrl, namespace: ns, lockLifetimeMs: config.schedulerLockLifetimeMs },
        get(LOGGER),
      ),
  );
  container
    .bind<HealthCheck[]>(HEALTH_CHECKS)
    .toConstantValue([new RedisHealthCheck(r.redis), new MySqlHealthCheck(r.orm), r.kafkaHealth]);
  container.bind(CONSUMER_LAG).toConstantValue(r.consumerLag);
};

const singleton = <T>(
  container: Container,
  id: ServiceIdentifier<T>,
  build: (get: <U>(id: ServiceIdentifier<U>) => U) => T,
) =>
  container
    .bind<T>(id)
    .toDynamicValue((ctx) => build((dep) => ctx.get(dep)))
    .inSingletonScope();

/** The memory profile: every port in process, no servers. */
const bindMemoryProfile = (container: Container, config: Config): void => {
  singleton(container, TYPES.MemoryDatabase, () => new MemoryDatabase());
  const clockNow = (get: <U>(id: ServiceIdentifier<U>) => U) => () => get<Clock>(CLOCK).now();
  singleton(container, EVENT_STORE, (get) => new MemoryEventStore(get(TYPES.MemoryDatabase)));
  singleton(container, INVENTORY, (get) => new MemoryInventory(get(TYPES.MemoryDatabase)));
  singleton(container, ORDER_READ_MODEL, (get) => new MemoryOrderReadModel(get(TYPES.MemoryDatabase)));
  singleton(container, OUTBOX, (get) => new MemoryOutbox(get(TYPES.MemoryDatabase)));
  singleton(container, UNIT_OF_WORK, (get) => new MemoryUnitOfWork(get(TYPES.MemoryDatabase), clockNow(get)));
  singleton(container, STOCK_GATE, () => new MemoryStockGate());
  singleton(container, DUPLICATE_REQUEST_LOCK, () => new MemoryLock());
  singleton(container, SOLD_OUT_FLAGS, () => new MemorySoldOutFlags());
  singleton(
    container,
    RATE_LIMITER,
    () =>
      new MemoryRateLimiter({
        points: config.rateLimit.points,
        durationSeconds: config.rateLimit.windowSeconds,
      }),
  );
  singleton(
    container,
    TYPES.MemoryBus,
    (get) => new MemoryMessageBus(get(LOGGER), { batchSize: config.consumerBatchSize, retryDelayMs: 50 }),
  );
  container.bind(MESSAGE_PUBLISHER).toService(TYPES.MemoryBus);
  container.bind(MESSAGE_SUBSCRIBER).toService(TYPES.MemoryBus);
  container.bind(CONSUMER_LAG).toService(TYPES.MemoryBus);
  singleton(container, SCHEDULER, (get) => new MemoryScheduler(get(CLOCK), get(LOGGER)));
  container.bind<HealthCheck[]>(HEALTH_CHECKS).toConstantValue([]);
};

const bindUseCases = (container: Container, config: Config): void => {
  singleton(
    container,
    TYPES.Catalog,
    (get) => new ProductCatalog(get(INVENTORY), get(CLOCK), config.productCacheMs),
  );
  singleton(
    container,
    TYPES.Dispatcher,
    (get) =>
      new OutboxDispatcher(
        get(OUTBOX),
        get(MESSAGE_PUBLISHER),
        get(CLOCK),
        get(LOGGER),
        get(METRICS),
        config.publish,
      ),
  );
  singleton(
    container,
    TYPES.PlaceOrder,
    (get) =>
      new PlaceOrder({
        catalog: get(TYPES.Catalog),
        rateLimiter: get(RATE_LIMITER),
        soldOut: get(SOLD_OUT_FLAGS),
        lock: get(DUPLICATE_REQUEST_LOCK),
        gate: get(STOCK_GATE),
        unitOfWork: get(UNIT_OF_WORK),
        dispatcher: get(TYPES.Dispatcher),
        clock: get(CLOCK),
        ids: get(ID_GENERATOR),
        logger: get(LOGGER),
        metrics: get(METRICS),
        lockLeaseMs: config.lockLeaseMs,
        groupCommit: config.groupCommit,
      }),
  );
  singleton(
    container,
    TYPES.CommitReservations,
    (get) =>
      new CommitReservations({
        unitOfWork: get(UNIT_OF_WORK),
        dispatcher: get(TYPES.Dispatcher),
        clock: get(CLOCK),
        ids: get(ID_GENERATOR),
        logger: get(LOGGER),
        metrics: get(METRICS),
        mergeDecrements: config.mergeDecrements,
      }),
  );
  singleton(
    container,
    TYPES.CompensateReservation,
    (get) =>
      new CompensateReservation(get(STOCK_GATE), get(SOLD_OUT_FLAGS), get(OUTBOX), get(CLOCK), get(LOGGER)),
  );
  singleton(
    container,
    TYPES.ReleaseOrder,
    (get) =>
      new ReleaseOrder(
        get(UNIT_OF_WORK),
        get(ORDER_READ_MODEL),
        get(TYPES.Dispatcher),
        get(CLOCK),
        get(LOGGER),
        config.paymentTimeoutMs,
        get(ID_GENERATOR),
      ),
  );
  singleton(
    container,
    TYPES.PayOrder,
    (get) => new PayOrder(get(UNIT_OF_WORK), get(CLOCK), get(ID_GENERATOR)),
  );
  singleton(
    container,
    TYPES.RelayOutbox,
    (get) =>
      new RelayOutbox(get(OUTBOX), get(MESSAGE_PUBLISHER), get(CLOCK), get(LOGGER), get(METRICS), {
        pendingGraceMs: config.outbox.pendingGraceMs,
        staleSentMs: config.outbox.staleSentMs,
        backoffBaseMs: config.outbox.backoffBaseMs,
        maxAttempts: config.outbox.maxAttempts,
        batchSize: 500,
      }),
  );
  singleton(
    container,
    TYPES.ReconcileStock,
    (get) =>
      new ReconcileStock({
        unitOfWork: get(UNIT_OF_WORK),
        inventory: get(INVENTORY),
        orders: get(ORDER_READ_MODEL),
        gate: get(STOCK_GATE),
        soldOut: get(SOLD_OUT_FLAGS),
        clock: get(CLOCK),
        ids: get(ID_GENERATOR),
        logger: get(LOGGER),
        metrics: get(METRICS),
        settleMs: config.reconcileSettleMs,
      }),
  );
  singleton(
    container,
    TYPES.AuditHistory,
    (get) =>
      new AuditHistory({
        events: get(EVENT_STORE),
        inventory: get(INVENTORY),
        orders: get(ORDER_READ_MODEL),
        gate: get(STOCK_GATE),
        clock: get(CLOCK),
        staleAfterMs: config.auditStaleMs,
        pageSize: 1_000,
      }),
  );
  singleton(
    container,
    TYPES.ManageProducts,
    (get) =>
      new ManageProducts({
        unitOfWork: get(UNIT_OF_WORK),
        gate: get(STOCK_GATE),
        soldOut: get(SOLD_OUT_FLAGS),
        catalog: get(TYPES.Catalog),
        clock: get(CLOCK),
        ids: get(ID_GENERATOR),
        logger: get(LOGGER),
      }),
  );
  singleton(
    container,
    TYPES.Queries,
    (get) => new Queries(get(INVENTORY), get(ORDER_READ_MODEL), get(STOCK_GATE)),
  );
  singleton(
    container,
    TYPES.SaleDashboard,
    (get) =>
      new SaleDashboard({
        inventory: get(INVENTORY),
        orders: get(ORDER_READ_MODEL),
        gate: get(STOCK_GATE),
        outbox: get(OUTBOX),
        lag: get(CONSUMER_LAG),
        metrics: get(METRICS),
        now: () => get<Clock>(CLOCK).now(),
      }),
  );
};

/** The one place that knows inversify: it picks the profile's adapters and wires the use cases to them. */
export const buildContainer = (
  config: Config,
  logger: AppLogger,
  overrides: ContainerOverrides = {},
  resources: RealResources | null = null,
): Container => {
  const container = new Container();
  container.bind(TYPES.Config).toConstantValue(config);
  container.bind(LOGGER).toConstantValue(logger);
  container.bind(CLOCK).toConstantValue(overrides.clock ?? new SystemClock());
  container.bind(ID_GENERATOR).toConstantValue(new RandomIdGenerator());
  const metrics = new PrometheusMetrics();
  container.bind(TYPES.PrometheusMetrics).toConstantValue(metrics);
  container.bind(METRICS).toConstantValue(metrics);
  container.bind(TYPES.Tokens).toConstantValue(new JwtTokens(config.jwtSecret));
  if (config.profile === 'memory') bindMemoryProfile(container, config);
  else if (resources) bindRealProfile(container, config, resources, overrides);
  else throw new ConfigError('the real profile needs its connections opened first');
  bindUseCases(container, config);
  return container;
};
