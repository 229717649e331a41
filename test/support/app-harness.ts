import {
  type GroupCommitOptions,
  type ListProductInput,
  type OrderView,
  type OutboxMessage,
  type PlaceOrderResult,
  type RelayOptions,
  reservedMessageId,
  type Tracer,
} from '../../src/application/index.js';
import type { DomainEvent } from '../../src/domain/index.js';
import type { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import type { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import type { MemoryStockGate } from '../../src/adapters/memory/memory-stock-gate.js';
import type { Application, CompositionConfig } from '../../src/infrastructure/compose.js';
import { type Config, loadConfig } from '../../src/infrastructure/config.js';
import {
  adapterOf,
  APPLICATION,
  buildContainer,
  MEMORY_BUS,
  MEMORY_DATABASE,
} from '../../src/infrastructure/container.js';
import {
  FlakyUnitOfWork,
  InstrumentedGate,
  RecordingMetrics,
  SequentialIds,
  SilentLogger,
  SwitchablePublisher,
  TestClock,
} from './app-doubles.js';
import { drainedInMemory } from './drained.js';

export const SALE_OPENS = '2030-06-01T10:00:00.000Z';

export const MINUTE = 60_000;

export type HarnessOptions = Readonly<{
  /** start the commit and compensation consumers at once (default true) */
  consumers?: boolean;
  mergeDecrements?: boolean;
  rateLimitPoints?: number;
  paymentTimeoutMs?: number;
  settleMs?: number;
  catalogTtlMs?: number;
  auditStaleMs?: number;
  relay?: Partial<RelayOptions>;
  groupCommit?: Partial<GroupCommitOptions>;
  start?: string;
  /** the application's tracer (default: off) */
  tracer?: Tracer;
}>;

export const defaultRelayOptions: RelayOptions = {
  pendingGraceMs: 10_000,
  staleSentMs: 5 * MINUTE,
  backoffBaseMs: 1_000,
  maxAttempts: 3,
  batchSize: 100,
};

/** What the stores hold, in rows: a rejected request must leave these unchanged. */
export type Writes = Readonly<{ events: number; orders: number; outbox: number }>;

/**
 * Every use case of the application on the memory profile, built by the service's own container (the
 * production defaults, a few made smaller), with a hand-moved clock, predictable ids and doubles a test can steer.
 */
export const buildApp = (options: HarnessOptions = {}) => {
  const clock = new TestClock(options.start ?? SALE_OPENS);
  const logger = new SilentLogger();
  const metrics = new RecordingMetrics();
  const ids = new SequentialIds();
  const eventIds = new SequentialIds('event');
  const relayOptions: RelayOptions = { ...defaultRelayOptions, ...options.relay };
  const { batchSize: relayBatchSize, ...relaySettings } = relayOptions;
  // the production defaults, with the budgets of addresses, writes and reads off
  const defaults = loadConfig({
    SECKILL_ADDRESS_RATE_LIMIT_POINTS: '0',
    SECKILL_WRITE_RATE_LIMIT_POINTS: '0',
    SECKILL_READ_RATE_LIMIT_POINTS: '0',
  });
  const config: Config & CompositionConfig = {
    ...defaults,
    productCacheMs: options.catalogTtlMs ?? 1_000,
    // the order route's budget per buyer, spent by the gate
    rateLimit: { points: options.rateLimitPoints ?? 1_000, windowSeconds: 60 },
    lockLeaseMs: 5_000,
    groupCommit: { maxBatch: 50, maxWaitMs: 1, maxConcurrent: 2, ...options.groupCommit },
    mergeDecrements: options.mergeDecrements ?? true,
    paymentTimeoutMs: options.paymentTimeoutMs ?? 15 * MINUTE,
    outbox: { ...defaults.outbox, ...relaySettings },
    relayBatchSize,
    reconcileSettleMs: options.settleMs ?? 2_000,
    auditStaleMs: options.auditStaleMs ?? 5 * MINUTE,
    // small pages, so that a test's few events take several, replayed in this process
    auditPageSize: 7,
    auditThread: false,
    consumerBatchSize: 200,
  };
  // the service's own container on the memory profile, a few bindings made steerable
  const container = buildContainer(config, {
    logger,
    metrics,
    resources: null,
    overrides: {
      clock: () => clock,
      ids: () => ids,
      eventIds: () => eventIds,
      unitOfWork: (inner) => new FlakyUnitOfWork(inner),
      gate: (inner) => new InstrumentedGate(inner),
      publisher: (inner) => new SwitchablePublisher(inner),
      ...(options.tracer ? { tracer: () => options.tracer! } : {}),
    },
  });
  const app = container.get<Application>(APPLICATION);
  const { events, inventory, orders, outbox, soldOut, salePaths } = app.ports;
  const unitOfWork = app.ports.unitOfWork as FlakyUnitOfWork;
  const gate = app.ports.gate as InstrumentedGate;
  const publisher = app.ports.publisher as SwitchablePublisher;
  const instances = app.ports.instances;
  const memoryGate = container.get(adapterOf('gate')) as MemoryStockGate;
  const db = container.get<MemoryDatabase>(MEMORY_DATABASE);
  const bus = container.get<MemoryMessageBus>(MEMORY_BUS);
  const { catalog, dispatcher, placeOrder, commit, compensate, releaseOrder, payOrder, relay } = app;
  const { reconcile, audit, products, salePath, dashboard } = app;

  let consumersStarted = false;
  const startConsumers = async (): Promise<void> => {
    if (consumersStarted) return;
    consumersStarted = true;
    for (const { topic, groupId, handle } of app.consumers) await bus.subscribe({ topic, groupId }, handle);
  };

  /** Every publish started so far has settled and every consumer group has caught up. */
  const drained = (): Promise<void> => drainedInMemory(dispatcher, bus);

  const listProduct = async (terms: Partial<ListProductInput> = {}): Promise<number> => {
    const listed = await products.list(
      {
        name: 'flash widget',
        stock: 10,
        perUserLimit: 2,
        maxPerOrder: 2,
        saleStartsAt: null,
        saleEndsAt: null,
        ...terms,
      },
      'list',
    );
    return listed.productId;
  };

  const buy = (userId: string, productId: number, quantity = 1): Promise<PlaceOrderResult> =>
    placeOrder.execute({ userId, productId, quantity, correlationId: `corr-${userId}` });

  /** Places an order the test needs accepted, and returns its id. */
  const mustBuy = async (userId: string, productId: number, quantity = 1): Promise<string> => {
    const result = await buy(userId, productId, quantity);
    if (!result.ok) throw new Error(`${userId} could not buy: ${result.code} ${result.detail}`);
    return result.orderId;
  };

  const order = async (orderId: string): Promise<OrderView> => {
    const view = await orders.get(orderId);
    if (!view) throw new Error(`no order ${orderId}`);
    return view;
  };

  const mysqlStock = async (productId: number): Promise<number> => {
    const record = await inventory.get(productId);
    if (!record) throw new Error(`no product ${productId}`);
    return record.stock;
  };

  const streamEvents = async (streamId: string): Promise<DomainEvent[]> =>
    (await events.read(streamId)).events.map((e) => e.event);

  const outboxRow = async (messageId: string): Promise<OutboxMessage> => {
    const row = await outbox.get(messageId);
    if (!row) throw new Error(`no outbox row ${messageId}`);
    return row;
  };

  const reservedRow = (orderId: string) => outboxRow(reservedMessageId(orderId));

  const writes = (): Writes => ({ events: db.events.length, orders: db.orders.size, outbox: db.outbox.size });

  const close = async (): Promise<void> => {
    await dispatcher.settle();
    await bus.stop();
  };

  return {
    clock,
    logger,
    metrics,
    ids,
    eventIds,
    db,
    events,
    inventory,
    orders,
    outbox,
    unitOfWork,
    memoryGate,
    gate,
    soldOut,
    salePaths,
    salePath,
    bus,
    publisher,
    catalog,
    dispatcher,
    commands: app.commands,
    placeOrder,
    commit,
    compensate,
    releaseOrder,
    payOrder,
    relay,
    reconcile,
    audit,
    products,
    instances,
    dashboard,
    relayOptions,
    startConsumers,
    drained,
    listProduct,
    buy,
    mustBuy,
    order,
    mysqlStock,
    streamEvents,
    outboxRow,
    reservedRow,
    writes,
    close,
  };
};

export type AppHarness = ReturnType<typeof buildApp>;

/** Builds the app, starting the consumers unless told not to. */
export const startApp = async (options: HarnessOptions = {}): Promise<AppHarness> => {
  const app = buildApp(options);
  if (options.consumers ?? true) await app.startConsumers();
  return app;
};

/** `count` distinct buyers, `user-1` … `user-<count>`, each placing one order of one unit. */
export const buyers = (count: number, prefix = 'user'): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);
