import {
  AuditHistory,
  type Clock,
  CommitReservations,
  CompensateReservation,
  ConsumerGroups,
  type ConsumerLag,
  type EventStore,
  type HealthCheck,
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
  type Schedule,
  type SoldOutFlags,
  type StockGate,
  Topics,
  type UnitOfWork,
} from '../application/index.js';
import type { Budget, Config } from './config.js';

/**
 * One adapter per port: the profile's (memory or real, bound by the container) or a test's doubles. The
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
  health: readonly HealthCheck[];
}>;

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
 * The composition root's one graph: the container calls it with the profile's adapters, the test harness
 * with its doubles, so both run the same wiring. Plain constructors, no container: a use case never sees one.
 */
export const compose = (ports: Ports, config: CompositionConfig): Application => {
  const { events, inventory, orders, outbox, unitOfWork, gate, soldOut, salePaths } = ports;
  const { publisher, clock, ids, eventIds, logger, metrics } = ports;
  const catalog = new ProductCatalog(inventory, clock, config.productCacheMs);
  const dispatcher = new OutboxDispatcher(outbox, publisher, clock, logger, metrics, config.publish);
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
    unitOfWork,
    dispatcher,
    clock,
    ids,
    eventIds,
    logger,
    metrics,
    lockLeaseMs: config.lockLeaseMs,
    idempotencyKeyTtlMs: config.idempotencyKeyTtlMs,
    idempotencyKeysMax: config.idempotencyKeysMax,
    groupCommit: config.groupCommit,
  });
  const commit = new CommitReservations({
    unitOfWork,
    dispatcher,
    clock,
    ids: eventIds,
    logger,
    metrics,
    mergeDecrements: config.mergeDecrements,
  });
  const compensate = new CompensateReservation(gate, soldOut, outbox, clock, logger);
  const releaseOrder = new ReleaseOrder(
    unitOfWork,
    orders,
    dispatcher,
    clock,
    logger,
    config.paymentTimeoutMs,
    eventIds,
  );
  const payOrder = new PayOrder(unitOfWork, clock, eventIds);
  const relay = new RelayOutbox(outbox, publisher, clock, logger, metrics, {
    pendingGraceMs: config.outbox.pendingGraceMs,
    staleSentMs: config.outbox.staleSentMs,
    backoffBaseMs: config.outbox.backoffBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    batchSize: config.relayBatchSize ?? 500,
  });
  const reconcile = new ReconcileStock({
    unitOfWork,
    inventory,
    orders,
    gate,
    soldOut,
    clock,
    ids: eventIds,
    logger,
    metrics,
    settleMs: config.reconcileSettleMs,
  });
  const audit = new AuditHistory({
    events,
    inventory,
    orders,
    gate,
    clock,
    staleAfterMs: config.auditStaleMs,
    pageSize: config.auditPageSize ?? 1_000,
  });
  const products = new ManageProducts({ unitOfWork, gate, soldOut, catalog, clock, ids: eventIds, logger });
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

  /** A consumer's batches are counted once handled, so that messages / batches is the mean merge. */
  const consumer = (topic: string, groupId: string, handle: Consumer['handle']): Consumer => ({
    topic,
    groupId,
    handle: async (messages) => {
      await handle(messages);
      metrics.count('consumer_batches', { group: groupId });
      metrics.count('consumer_messages', { group: groupId }, messages.length);
    },
  });

  return {
    ports,
    catalog,
    dispatcher,
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
    ],
  };
};
