// The composition root: every use case wired to the ports in one graph, which reads best whole.
import {
  AuditHistory,
  type Clock,
  CommitReservations,
  CompensateReservation,
  ConsumerGroups,
  type ConsumerLag,
  type EventStore,
  type HealthCheck,
  type HistoryFolds,
  type IdGenerator,
  type InboundMessage,
  type InstanceRegistry,
  type Inventory,
  type Logger,
  ManageProducts,
  type BudgetSize,
  type MessagePublisher,
  type Metrics,
  type OrderReadModel,
  type Outbox,
  OutboxDispatcher,
  commandHandlers,
  type CommandHandlers,
  PayOrder,
  PlaceOrder,
  ProductCatalog,
  Queries,
  WatchOrder,
  IssueSalePath,
  type RateBudgets,
  type SalePaths,
  type StreamTickets,
  ReconcileStock,
  RelayOutbox,
  ReleaseOrder,
  SaleDashboard,
  StockBooksReader,
  type Schedule,
  type MessageSubscriber,
  type OrderProjectionRebuild,
  RebuildProjections,
  type Scheduler,
  type SoldOutFlags,
  type StockGate,
  Spans,
  Topics,
  tracedHandler,
  tracedPublisher,
  type Tracer,
  type UnitOfWork,
} from '../application/index.js';
import type { Budget, Config } from './config.js';

/**
 * One adapter per port: the profile's (memory or real, bound by the container), or what an override made of it. The
 * message subscriber and the scheduler are not among them: only a worker uses them, to run `consumers` and
 * `jobs`, and a process that serves HTTP alone never builds them (agenda's connects to Redis when built).
 */
export type Ports = Readonly<{
  events: EventStore;
  inventory: Inventory;
  orders: OrderReadModel;
  outbox: Outbox;
  unitOfWork: UnitOfWork;
  gate: StockGate;
  soldOut: SoldOutFlags;
  budgets: RateBudgets;
  salePaths: SalePaths;
  /** tickets that open an order's event stream from a browser */
  streamTickets: StreamTickets;
  publisher: MessagePublisher;
  lag: ConsumerLag;
  /** where every process of the deployment beats, for the dashboard */
  instances: InstanceRegistry;
  clock: Clock;
  /** order ids, and the correlation id of a request that brings none */
  ids: IdGenerator;
  /** event ids (the envelope's); the service draws them from `ids` too, a test from a sequence of its own */
  eventIds: IdGenerator;
  logger: Logger;
  metrics: Metrics;
  /** the process's spans (off unless SECKILL_OTEL_ZIPKIN_URL is set) */
  tracer: Tracer;
  health: readonly HealthCheck[];
  /** where the audit's replay keeps its state: a thread of its own (SECKILL_AUDIT_THREAD) or this process */
  historyFolds: HistoryFolds;
}>;

/** What a worker runs the application's consumers and jobs on. */
export type WorkerPorts = Readonly<{ subscriber: MessageSubscriber; scheduler: Scheduler }>;

/** What `seckill projections rebuild` replays into: fresh `orders` tables beside the live ones. */
export type RebuildPorts = Readonly<{ rebuildTarget: OrderProjectionRebuild }>;

/**
 * The rebuild of the projections, from the event store into fresh tables: the one use case that runs without the
 * rest of the application (the real profile's MySQL alone).
 */
export const composeRebuild = (
  ports: Pick<Ports, 'events'> & RebuildPorts,
  pageSize = 5_000,
): RebuildProjections =>
  new RebuildProjections({ events: ports.events, target: ports.rebuildTarget, pageSize });

/** The settings compose() reads. The service passes its whole Config; a test passes these alone. */
export type CompositionConfig = Pick<
  Config,
  | 'productCacheMs'
  | 'rateLimit'
  | 'admission'
  | 'lockLeaseMs'
  | 'idempotencyKeyTtlMs'
  | 'idempotencyKeysMax'
  | 'groupCommit'
  | 'publish'
  | 'mergeDecrements'
  | 'paymentTimeoutMs'
  | 'paymentScanMs'
  | 'orderEvents'
  | 'outbox'
  | 'reconcileCron'
  | 'reconcileSettleMs'
  | 'mysql'
  | 'auditStaleMs'
  | 'pathTokenTtlMs'
> &
  Readonly<{
    /** outbox rows one relay run sends at most (default 500) */
    relayBatchSize?: number;
    /** events the audit reads per page (default 1,000) */
    auditPageSize?: number;
  }>;

/** A consumer group a worker joins, and the use case that handles its batches. */
export type Consumer = Readonly<{
  topic: string;
  groupId: string;
  handle: (messages: readonly InboundMessage[]) => Promise<void>;
}>;

/** A job a worker schedules. */
export type Job = Readonly<{ name: string; when: Schedule; run: () => Promise<unknown> }>;

/** The application: every use case wired to the ports, and what a worker subscribes and schedules. */
export type Application = Readonly<{
  ports: Ports;
  catalog: ProductCatalog;
  dispatcher: OutboxDispatcher;
  /** every write of the use cases goes through these */
  commands: CommandHandlers;
  placeOrder: PlaceOrder;
  commit: CommitReservations;
  compensate: CompensateReservation;
  releaseOrder: ReleaseOrder;
  payOrder: PayOrder;
  relay: RelayOutbox;
  reconcile: ReconcileStock;
  audit: AuditHistory;
  products: ManageProducts;
  queries: Queries;
  watchOrder: WatchOrder;
  salePath: IssueSalePath;
  dashboard: SaleDashboard;
  consumers: readonly Consumer[];
  jobs: readonly Job[];
}>;

/** A configured budget as the gate spends it; 0 points: off. */
const budgetSize = (budget: Budget): BudgetSize | null =>
  budget.points > 0 ? { points: budget.points, windowMs: budget.windowSeconds * 1_000 } : null;

/**
 * The composition root's one graph, called by the container (container.ts) for the service and the test harness
 * alike, so both run the same wiring. Plain constructors, no container: a use case never sees one.
 */
export const compose = (ports: Ports, config: CompositionConfig): Application => {
  const { events, inventory, orders, outbox, unitOfWork, gate, soldOut, salePaths } = ports;
  const { publisher, clock, ids, eventIds, logger, metrics, tracer } = ports;
  const catalog = new ProductCatalog(inventory, clock, config.productCacheMs);
  const dispatcher = new OutboxDispatcher(
    outbox,
    tracedPublisher(publisher, tracer, Spans.PRODUCE),
    clock,
    logger,
    metrics,
    config.publish,
  );
  const commands = commandHandlers({ unitOfWork, ids: eventIds, clock, dispatcher });
  const placeOrder = new PlaceOrder({
    catalog,
    budgets: {
      buyer: budgetSize(config.rateLimit),
      address: budgetSize(config.admission.address),
    },
    lookups: ports.budgets.read,
    soldOut,
    gate,
    orders,
    commands: commands.orders,
    clock,
    ids,
    logger,
    metrics,
    lockLeaseMs: config.lockLeaseMs,
    idempotencyKeyTtlMs: config.idempotencyKeyTtlMs,
    idempotencyKeysMax: config.idempotencyKeysMax,
    groupCommit: config.groupCommit,
    tracer,
  });
  const commit = new CommitReservations({
    orders: commands.orders,
    clock,
    logger,
    metrics,
    mergeDecrements: config.mergeDecrements,
    tracer,
  });
  const compensate = new CompensateReservation(gate, soldOut, outbox, clock, logger);
  const releaseOrder = new ReleaseOrder(
    commands.orders,
    orders,
    clock,
    logger,
    config.paymentTimeoutMs,
    tracer,
  );
  const payOrder = new PayOrder(commands.orders, clock);
  const relayPublisher = tracedPublisher(publisher, tracer, Spans.RELAY_PRODUCE);
  const relay = new RelayOutbox(outbox, relayPublisher, clock, logger, metrics, {
    pendingGraceMs: config.outbox.pendingGraceMs,
    staleSentMs: config.outbox.staleSentMs,
    backoffBaseMs: config.outbox.backoffBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    batchSize: config.relayBatchSize ?? 500,
  });
  const books = new StockBooksReader({ gate, unitOfWork });
  const reconcile = new ReconcileStock({
    products: commands.products,
    inventory,
    orders,
    books,
    gate,
    soldOut,
    clock,
    ids: eventIds,
    logger,
    metrics,
    settleMs: config.reconcileSettleMs,
    recordDeadlineMs: config.groupCommit.maxWaitMs + config.mysql.operationTimeoutMs,
  });
  const audit = new AuditHistory({
    events,
    folds: ports.historyFolds,
    books,
    clock,
    staleAfterMs: config.auditStaleMs,
    pageSize: config.auditPageSize ?? 1_000,
  });
  const products = new ManageProducts({
    products: commands.products,
    gate,
    soldOut,
    catalog,
    clock,
    logger,
  });
  const queries = new Queries(inventory, orders, gate);
  const watchOrder = new WatchOrder(orders, ports.streamTickets, clock, config.orderEvents);
  const salePath = new IssueSalePath({ catalog, salePaths, clock, ttlMs: config.pathTokenTtlMs });
  const dashboard = new SaleDashboard({
    inventory,
    orders,
    gate,
    outbox,
    lag: ports.lag,
    instances: ports.instances,
    metrics,
    now: () => clock.now(),
  });

  /**
   * A consumer's batches are counted once handled, so that messages / batches is the mean merge; each is a span in
   * the trace of every message it holds.
   */
  const consumer = (topic: string, groupId: string, handle: Consumer['handle']): Consumer => ({
    topic,
    groupId,
    handle: async (messages) => {
      await (tracer.enabled ? tracedHandler(tracer, { topic, groupId }, handle)(messages) : handle(messages));
      metrics.count('consumer_batches', { group: groupId });
      metrics.count('consumer_messages', { group: groupId }, messages.length);
    },
  });

  return {
    ports,
    catalog,
    dispatcher,
    commands,
    placeOrder,
    commit,
    compensate,
    releaseOrder,
    payOrder,
    relay,
    reconcile,
    audit,
    products,
    queries,
    watchOrder,
    salePath,
    dashboard,
    consumers: [
      consumer(Topics.ORDERS_RESERVED, ConsumerGroups.COMMIT, (m) => commit.handle(m)),
      consumer(Topics.STOCK_COMPENSATION, ConsumerGroups.COMPENSATION, (m) => compensate.handle(m)),
    ],
    jobs: [
      { name: 'outbox-relay', when: { everyMs: config.outbox.relayEveryMs }, run: () => relay.run() },
      {
        name: 'payment-timeout',
        when: { everyMs: config.paymentScanMs },
        run: () => releaseOrder.releaseExpired(),
      },
      { name: 'reconciliation', when: { cron: config.reconcileCron }, run: () => reconcile.run() },
    ].map((job) => (tracer.enabled ? tracedJob(tracer, job) : job)),
  };
};

/** A job's run as the root span of a trace of its own, drawn by ratio like any new trace. */
const tracedJob = (tracer: Tracer, job: Job): Job => ({
  ...job,
  run: () =>
    tracer.draw()
      ? tracer.root(`${Spans.JOB} ${job.name}`, () => job.run(), { attributes: { 'seckill.job': job.name } })
      : job.run(),
});
