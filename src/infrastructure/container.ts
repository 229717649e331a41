import 'reflect-metadata';
import { Container, type ServiceIdentifier } from 'inversify';
import {
  CLOCK,
  type Clock,
  CONSUMER_LAG,
  EVENT_STORE,
  HEALTH_CHECKS,
  ID_GENERATOR,
  type IdGenerator,
  INSTANCE_REGISTRY,
  type InstanceRegistry,
  INVENTORY,
  LOGGER,
  type Logger,
  MESSAGE_PUBLISHER,
  MESSAGE_SUBSCRIBER,
  type MessagePublisher,
  type MessageSubscriber,
  METRICS,
  type Metrics,
  ORDER_READ_MODEL,
  OUTBOX,
  RATE_BUDGETS,
  SALE_PATHS,
  STREAM_TICKETS,
  SCHEDULER,
  type Scheduler,
  SOLD_OUT_FLAGS,
  STOCK_GATE,
  UNIT_OF_WORK,
} from '../application/index.js';
import { RandomIdGenerator } from '../adapters/system/random-id-generator.js';
import { SystemClock } from '../adapters/system/system-clock.js';
import { type Application, compose, type Ports } from './compose.js';
import { type Config, ConfigError } from './config.js';
import {
  bindMemoryProfile,
  bindRealProfile,
  PROFILE_INSTANCE_REGISTRY,
  PROFILE_PUBLISHER,
} from './profiles.js';
import type { RealResources } from './real-resources.js';

export type { Container } from 'inversify';
export { MEMORY_BUS, MEMORY_DATABASE } from './profiles.js';

/** The whole application, built by compose() from the bound ports: what the service resolves, once. */
export const APPLICATION = Symbol.for('seckill.Application');
/** What a worker runs the application's consumers and jobs on, resolved only by a process that runs one. */
export const WORKER = Symbol.for('seckill.Worker');

export type WorkerPorts = Readonly<{ subscriber: MessageSubscriber; scheduler: Scheduler }>;

export type ContainerOverrides = Readonly<{
  clock?: Clock;
  /** wraps the profile's publisher (fault drills deliver every message twice through this) */
  publisher?: (inner: MessagePublisher) => MessagePublisher;
  /** replaces the profile's instance registry (tests make services of one process share one) */
  instances?: InstanceRegistry;
}>;

export type ContainerOptions = Readonly<{
  /** the process's logger and metrics, which outlive the container */
  logger: Logger;
  metrics: Metrics;
  /** the real profile's connections, opened first (null on the memory profile) */
  resources: RealResources | null;
  overrides?: ContainerOverrides;
}>;

/** Which binding fills each port of compose(). */
const PORT_IDS: { readonly [K in keyof Ports]-?: ServiceIdentifier<Ports[K]> } = {
  events: EVENT_STORE,
  inventory: INVENTORY,
  orders: ORDER_READ_MODEL,
  outbox: OUTBOX,
  unitOfWork: UNIT_OF_WORK,
  gate: STOCK_GATE,
  soldOut: SOLD_OUT_FLAGS,
  budgets: RATE_BUDGETS,
  salePaths: SALE_PATHS,
  streamTickets: STREAM_TICKETS,
  publisher: MESSAGE_PUBLISHER,
  lag: CONSUMER_LAG,
  instances: INSTANCE_REGISTRY,
  clock: CLOCK,
  ids: ID_GENERATOR,
  eventIds: ID_GENERATOR,
  logger: LOGGER,
  metrics: METRICS,
  health: HEALTH_CHECKS,
};

/**
 * The container, with its profiles (profiles.ts) the only code that knows inversify. It binds every port to the
 * profile's adapter and the application to compose() over those ports; the service resolves APPLICATION once
 * (and WORKER, to run a worker). Every binding is a singleton: one adapter per port per process.
 */
export const buildContainer = (config: Config, options: ContainerOptions): Container => {
  const { overrides = {} } = options;
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind<Logger>(LOGGER).toConstantValue(options.logger);
  container.bind<Metrics>(METRICS).toConstantValue(options.metrics);
  container.bind<Clock>(CLOCK).toConstantValue(overrides.clock ?? new SystemClock());
  container.bind<IdGenerator>(ID_GENERATOR).toResolvedValue(() => new RandomIdGenerator());
  if (config.profile === 'memory') bindMemoryProfile(container, config);
  else if (options.resources) bindRealProfile(container, config, options.resources);
  else throw new ConfigError('the real profile needs its connections opened first');
  const wrap = overrides.publisher ?? ((publisher: MessagePublisher) => publisher);
  container
    .bind<MessagePublisher>(MESSAGE_PUBLISHER)
    .toResolvedValue((publisher: MessagePublisher) => wrap(publisher), [PROFILE_PUBLISHER]);
  container
    .bind<InstanceRegistry>(INSTANCE_REGISTRY)
    .toResolvedValue((own: InstanceRegistry) => overrides.instances ?? own, [PROFILE_INSTANCE_REGISTRY]);
  container.bind<Application>(APPLICATION).toDynamicValue((context) => {
    const ports = Object.fromEntries(
      Object.entries(PORT_IDS).map(([name, id]) => [name, context.get(id as ServiceIdentifier<unknown>)]),
    ) as Ports;
    return compose(ports, config);
  });
  container
    .bind<WorkerPorts>(WORKER)
    .toResolvedValue(
      (subscriber: MessageSubscriber, scheduler: Scheduler) => ({ subscriber, scheduler }),
      [MESSAGE_SUBSCRIBER, SCHEDULER],
    );
  return container;
};
