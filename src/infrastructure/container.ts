import 'reflect-metadata';
import { Container } from 'inversify';
import {
  type Logger,
  type Metrics,
  NO_TRACING,
  type RebuildProjections,
  type Tracer,
} from '../application/index.js';
import { InProcessHistoryFolds } from '../adapters/system/in-process-history-folds.js';
import { RandomIdGenerator } from '../adapters/system/random-id-generator.js';
import { SystemClock } from '../adapters/system/system-clock.js';
import { ThreadHistoryFolds } from '../adapters/system/thread-history-folds.js';
import {
  type Application,
  compose,
  type CompositionConfig,
  composeRebuild,
  type Ports,
  type RebuildPorts,
  type WorkerPorts,
} from './compose.js';
import { type Config, ConfigError } from './config.js';
import {
  adapterNames,
  adapterOf,
  bindAdapter,
  type Bindings,
  bindMemoryProfile,
  bindRealProfile,
  portOf,
} from './profiles.js';
import type { MySqlResources, RealResources } from './real-resources.js';

export type { Container } from 'inversify';
export type { WorkerPorts } from './compose.js';
export { adapterOf, MEMORY_BUS, MEMORY_DATABASE, portOf } from './profiles.js';

/** The whole application, built by compose() from the bound ports: what the service resolves, once. */
export const APPLICATION = Symbol.for('seckill.Application');
/** What a worker runs the application's consumers and jobs on, resolved only by a process that runs one. */
export const WORKER = Symbol.for('seckill.Worker');
/** The projections rebuild, resolved alone by `seckill projections rebuild` (the stores are all it needs). */
export const REBUILD = Symbol.for('seckill.Rebuild');

/**
 * What a test (or a drill) makes of a binding: given the profile's adapter, it returns the one the application
 * gets, wrapping it (a publisher that delivers twice, a unit of work that can fail) or replacing it (a clock a
 * test moves, a registry that services share).
 */
export type ContainerOverrides = Readonly<{ [K in keyof Bindings]?: (adapter: Bindings[K]) => Bindings[K] }>;

export type ContainerOptions = Readonly<{
  /** the process's logger and metrics, which outlive the container */
  logger: Logger;
  metrics: Metrics;
  /** the process's tracer (off when absent) */
  tracer?: Tracer;
  /** the real profile's connections, opened first (null on the memory profile; MySQL's alone: the stores alone) */
  resources: RealResources | MySqlResources | null;
  overrides?: ContainerOverrides;
}>;

/**
 * The one composition of the application: the service, the test harness and every test service are built here,
 * from a profile and overrides. The container, with its profiles (profiles.ts) the only code that knows
 * inversify, binds each binding's adapter (the process-wide ones here, the rest by the profile), then the port
 * the application gets over it (the override applied), then the application: compose() over the ports. Every
 * binding is a singleton: one adapter per port per process.
 */
export const buildContainer = (config: Config & CompositionConfig, options: ContainerOptions): Container => {
  const { overrides = {} } = options;
  const container = new Container({ defaultScope: 'Singleton' });
  bindAdapter(container, 'logger').toConstantValue(options.logger);
  bindAdapter(container, 'metrics').toConstantValue(options.metrics);
  bindAdapter(container, 'tracer').toConstantValue(options.tracer ?? NO_TRACING);
  bindAdapter(container, 'clock').toResolvedValue(() => new SystemClock());
  bindAdapter(container, 'ids').toResolvedValue(() => new RandomIdGenerator());
  bindAdapter(container, 'historyFolds').toResolvedValue(() =>
    config.auditThread ? new ThreadHistoryFolds() : new InProcessHistoryFolds(),
  );
  // the service draws event ids from the same generator as the rest
  bindAdapter(container, 'eventIds').toService(adapterOf('ids'));
  if (config.profile === 'memory') bindMemoryProfile(container, config);
  else if (options.resources) bindRealProfile(container, config, options.resources);
  else throw new ConfigError('the real profile needs its connections opened first');
  const names = [...adapterNames(container)];
  for (const name of names) bindPort(container, name, overrides);
  container.bind<Application>(APPLICATION).toDynamicValue((context) => {
    const entries = names
      .filter((name) => !OUTSIDE_THE_APPLICATION.has(name))
      .map((name) => [name, context.get(portOf(name))]);
    return compose(Object.fromEntries(entries) as Ports, config);
  });
  container.bind<WorkerPorts>(WORKER).toDynamicValue((context) => ({
    subscriber: context.get(portOf('subscriber')),
    scheduler: context.get(portOf('scheduler')),
  }));
  container.bind<RebuildProjections>(REBUILD).toDynamicValue((context) =>
    composeRebuild({
      events: context.get(portOf('events')),
      rebuildTarget: context.get(portOf('rebuildTarget')),
    }),
  );
  return container;
};

const bindPort = <K extends keyof Bindings>(container: Container, name: K, overrides: ContainerOverrides) => {
  const override: ((adapter: Bindings[K]) => Bindings[K]) | undefined = overrides[name];
  const binding = container.bind<Bindings[K]>(portOf(name));
  if (override) binding.toResolvedValue((adapter: Bindings[K]) => override(adapter), [adapterOf(name)]);
  else binding.toService(adapterOf(name));
};

/** Bindings the application is not built with: a worker's (agenda connects when built), the rebuild's. */
const OUTSIDE_THE_APPLICATION: ReadonlySet<keyof Bindings> = new Set<keyof Bindings>([
  'subscriber',
  'scheduler',
  'rebuildTarget',
] satisfies (keyof (WorkerPorts & RebuildPorts))[]);
