import type { Container, ServiceIdentifier } from 'inversify';
import type { Clock, Logger, RateBudgets, RateLimiter, SalePaths } from '../application/index.js';
import { MemoryDatabase } from '../adapters/memory/memory-database.js';
import { MemoryEventStore } from '../adapters/memory/memory-event-store.js';
import { MemoryInstanceRegistry } from '../adapters/memory/memory-instance-registry.js';
import { MemoryInventory } from '../adapters/memory/memory-inventory.js';
import { MemoryMessageBus } from '../adapters/memory/memory-message-bus.js';
import { MemoryOrderReadModel } from '../adapters/memory/memory-order-read-model.js';
import { MemoryOutbox } from '../adapters/memory/memory-outbox.js';
import { MemoryOrderProjectionRebuild } from '../adapters/memory/memory-projection-rebuild.js';
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
import { MySqlOrderProjectionRebuild } from '../adapters/mysql/mysql-projection-rebuild.js';
import { standaloneSession } from '../adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../adapters/mysql/mysql-unit-of-work.js';
import { RedisHealthCheck } from '../adapters/redis/redis-health-check.js';
import { RedisInstanceRegistry } from '../adapters/redis/redis-instance-registry.js';
import { RedisRateLimiter } from '../adapters/redis/redis-rate-limiter.js';
import { RedisSalePaths } from '../adapters/redis/redis-sale-paths.js';
import { RedisStreamTickets } from '../adapters/redis/redis-stream-tickets.js';
import { RedisSoldOutFlags } from '../adapters/redis/redis-sold-out-flags.js';
import { RedisStockGate } from '../adapters/redis/redis-stock-gate.js';
import type { Ports, RebuildPorts, WorkerPorts } from './compose.js';
import type { Budget, Config } from './config.js';
import type { MySqlResources, RealResources } from './real-resources.js';

/** Every binding the application and a worker are given, by name: the ports of compose() and the worker's. */
export type Bindings = Ports & WorkerPorts & RebuildPorts;

/**
 * What the application is given for a binding: the profile's adapter, or what an override made of it. The
 * binding's name is its identifier: there is no table of tokens beside the `Ports` type.
 */
export const portOf = <K extends keyof Bindings>(name: K): ServiceIdentifier<Bindings[K]> =>
  Symbol.for(`seckill.port.${name}`);

/** What a profile binds for a binding: its own adapter, before an override. */
export const adapterOf = <K extends keyof Bindings>(name: K): ServiceIdentifier<Bindings[K]> =>
  Symbol.for(`seckill.adapter.${name}`);

/** The names a container's profile bound, for the container to bind each port over its adapter. */
const boundNames = new WeakMap<Container, Set<keyof Bindings>>();

/** Binds a profile's adapter for `name` (see `portOf` for what the application gets). */
export const bindAdapter = <K extends keyof Bindings>(container: Container, name: K) => {
  const names = boundNames.get(container) ?? new Set();
  boundNames.set(container, names.add(name));
  return container.bind<Bindings[K]>(adapterOf(name));
};

/** The names of the adapters bound so far. */
export const adapterNames = (container: Container): ReadonlySet<keyof Bindings> =>
  boundNames.get(container) ?? new Set();

/** The memory profile's tables, shared by its stores (tests read them to see that nothing was written). */
export const MEMORY_DATABASE = Symbol.for('seckill.MemoryDatabase');
/** The memory profile's message bus: its publisher, subscriber and consumer lag (tests wait on it to go idle). */
export const MEMORY_BUS = Symbol.for('seckill.MemoryBus');

/*
 * The two profiles of the container (container.ts): each binds an adapter for every binding but the
 * process-wide ones (logger, metrics, clock, ids, the audit's folds), which the container binds. An adapter
 * that needs another port asks for the port (`portOf`), so that it sees what an override made of it (a test's
 * clock).
 */

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
  const bind = <K extends keyof Bindings>(name: K) => bindAdapter(container, name);
  const db: [symbol] = [MEMORY_DATABASE];
  // the marks, the path tokens and the tickets keep time by the service's clock (a test moves it)
  const nowMs = (clock: Clock) => () => Date.parse(clock.now());
  const clock: [ServiceIdentifier<Clock>] = [portOf('clock')];
  container.bind<MemoryDatabase>(MEMORY_DATABASE).toResolvedValue(() => new MemoryDatabase());
  bind('events').toResolvedValue((d: MemoryDatabase) => new MemoryEventStore(d), db);
  bind('unitOfWork').toResolvedValue((d: MemoryDatabase) => new MemoryUnitOfWork(d), db);
  bind('inventory').toResolvedValue((d: MemoryDatabase) => new MemoryInventory(d), db);
  bind('orders').toResolvedValue((d: MemoryDatabase) => new MemoryOrderReadModel(d), db);
  bind('outbox').toResolvedValue((d: MemoryDatabase) => new MemoryOutbox(d), db);
  bind('rebuildTarget').toResolvedValue((d: MemoryDatabase) => new MemoryOrderProjectionRebuild(d), db);
  // the gate uses up the path tokens the sale path issues
  bind('gate').toResolvedValue(
    (c: Clock, paths: SalePaths) => new MemoryStockGate(nowMs(c), paths as MemorySalePaths),
    [portOf('clock'), portOf('salePaths')],
  );
  bind('soldOut').toResolvedValue(
    (c: Clock) =>
      new MemorySoldOutFlags(new MemoryStockBackChannel(), {
        ttlMs: config.soldOutFlagTtlMs,
        nowMs: nowMs(c),
      }),
    clock,
  );
  bind('budgets').toResolvedValue(() =>
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
  bind('salePaths').toResolvedValue((c: Clock) => new MemorySalePaths(nowMs(c)), clock);
  bind('streamTickets').toResolvedValue((c: Clock) => new MemoryStreamTickets(nowMs(c)), clock);
  container
    .bind<MemoryMessageBus>(MEMORY_BUS)
    .toResolvedValue(
      (logger: Logger) =>
        new MemoryMessageBus(logger, { batchSize: config.consumerBatchSize, retryDelayMs: 50 }),
      [portOf('logger')],
    );
  bind('publisher').toService(MEMORY_BUS);
  bind('subscriber').toService(MEMORY_BUS);
  bind('lag').toService(MEMORY_BUS);
  bind('scheduler').toResolvedValue(
    (c: Clock, logger: Logger) => new MemoryScheduler(c, logger),
    [portOf('clock'), portOf('logger')],
  );
  bind('instances').toResolvedValue((c: Clock) => new MemoryInstanceRegistry(c), clock);
  bind('health').toConstantValue([]);
};

/**
 * The real profile: Redis takes the flood, MySQL has the final word, Kafka carries the rest. Given MySQL's pool
 * alone, it binds the stores alone (what a projections rebuild needs).
 */
export const bindRealProfile = (
  container: Container,
  config: Config,
  r: RealResources | MySqlResources,
): void => {
  bindRealStores(container, config, r);
  if ('redis' in r) bindRealServers(container, config, r);
};

const bindRealStores = (container: Container, config: Config, r: MySqlResources): void => {
  const bind = <K extends keyof Bindings>(name: K) => bindAdapter(container, name);
  const timeout = config.mysql.operationTimeoutMs;
  const session = standaloneSession(r.orm, timeout);
  bind('events').toResolvedValue(() => new MySqlEventStore(session));
  bind('unitOfWork').toResolvedValue(() => new MySqlUnitOfWork(r.orm, timeout));
  bind('inventory').toResolvedValue(() => new MySqlInventory(session));
  bind('orders').toResolvedValue(() => new MySqlOrderReadModel(session));
  bind('outbox').toResolvedValue(() => new MySqlOutbox(session));
  // a page of the rebuild writes thousands of rows: more time than an order's statement gets
  bind('rebuildTarget').toResolvedValue(
    () => new MySqlOrderProjectionRebuild(r.orm, Math.max(timeout, 30_000)),
  );
};

const bindRealServers = (container: Container, config: Config, r: RealResources): void => {
  const bind = <K extends keyof Bindings>(name: K) => bindAdapter(container, name);
  const ns = config.redisNamespace;
  const logger: [ServiceIdentifier<Logger>] = [portOf('logger')];
  bind('gate').toResolvedValue(() => new RedisStockGate(r.redis, ns));
  bind('soldOut').toResolvedValue(
    () => new RedisSoldOutFlags(r.redis, r.redisSubscriber, ns, { ttlMs: config.soldOutFlagTtlMs }),
  );
  bind('budgets').toResolvedValue(() =>
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
  bind('salePaths').toResolvedValue(() => new RedisSalePaths(r.redis, ns));
  bind('streamTickets').toResolvedValue(() => new RedisStreamTickets(r.redis, ns));
  bind('publisher').toConstantValue(r.publisher);
  bind('subscriber').toResolvedValue(
    (l: Logger) =>
      new KafkaMessageSubscriber(r.kafka, l, {
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        partitionsConsumedConcurrently: config.kafka.partitionsConsumedConcurrently,
        maxBytesPerPartition: config.kafka.maxBytesPerPartition,
        minBytes: config.kafka.fetchMinBytes,
        maxWaitTimeMs: config.kafka.fetchMaxWaitMs,
        names: r.kafkaNames,
      }),
    logger,
  );
  bind('lag').toConstantValue(r.consumerLag);
  bind('instances').toResolvedValue(() => new RedisInstanceRegistry(r.redis, ns));
  bind('scheduler').toResolvedValue(
    (l: Logger) =>
      new AgendaScheduler(
        {
          redisUrl: config.schedulerRedisUrl,
          namespace: ns,
          lockLifetimeMs: config.schedulerLockLifetimeMs,
        },
        l,
      ),
    logger,
  );
  bind('health').toConstantValue([
    new RedisHealthCheck(r.redis),
    new MySqlHealthCheck(r.healthOrm),
    r.kafkaHealth,
  ]);
};
