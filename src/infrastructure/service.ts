import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Container, ServiceIdentifier } from 'inversify';
import {
  ConsumerGroups,
  HEALTH_CHECKS,
  ID_GENERATOR,
  type CommitReservations,
  type CompensateReservation,
  type HealthCheck,
  type IdGenerator,
  type InboundMessage,
  type ManageProducts,
  type MessageSubscriber,
  MESSAGE_SUBSCRIBER,
  OUTBOX,
  type Outbox,
  type OutboxDispatcher,
  OutboxStatus,
  type PlaceOrder,
  type ReconcileStock,
  type RelayOutbox,
  type ReleaseOrder,
  type SaleDashboard,
  SCHEDULER,
  type Scheduler,
  Topics,
} from '../application/index.js';
import { createHttpApp, type HttpObserver } from '../adapters/http/app.js';
import { createOpsApp } from '../adapters/http/ops.js';
import type { JwtTokens } from '../adapters/http/tokens.js';
import type { MemoryMessageBus } from '../adapters/memory/memory-message-bus.js';
import type { Config } from './config.js';
import { buildContainer, type ContainerOverrides, TYPES } from './container.js';
import type { AppLogger } from './logger.js';
import type { PrometheusMetrics } from './metrics.js';
import { openRealResources, type RealResources } from './real-resources.js';

export type Roles = Readonly<{ http: boolean; worker: boolean }>;

/** how long a stopping service lets requests under way finish */
const SHUTDOWN_GRACE_MS = 5_000;

/** The package's version, from its package.json (two levels up from src/, three from dist/src/). */
const VERSION = ((): string => {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'seckill' && pkg.version) return pkg.version;
    } catch {
      // not here; try one level up
    }
  }
  return '0.0.0';
})();

const observerFor = (
  metrics: PrometheusMetrics,
  dashboard: SaleDashboard,
  logger: AppLogger,
): HttpObserver => ({
  request: (method, route, status, seconds) => {
    metrics.httpRequests.inc({ method, route, code: String(status) });
    metrics.httpDuration.observe({ method, route }, seconds);
  },
  orderAnswer: (code) => metrics.count('order_answers', { code }),
  render: async () => {
    // a scrape reads the gate, MySQL stock, the outbox and the consumer lag afresh into their gauges
    await dashboard.gather().catch((error: unknown) => {
      logger.warn({ err: String(error) }, 'metrics: could not read the sale figures');
    });
    return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
  },
});

/**
 * Requests Node's HTTP parser refuses before express sees them (bad bytes in the path, oversized headers) still
 * get a problem+json answer.
 */
const answerUnreadableRequest = (error: NodeJS.ErrnoException, socket: Duplex): void => {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    type: tooLarge ? '/problems/headers-too-large' : '/problems/bad-request',
    title: tooLarge ? 'Request Header Fields Too Large' : 'Bad Request',
    status,
    code: tooLarge ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST',
    detail: tooLarge ? 'the request headers are too large' : 'the request could not be parsed as HTTP',
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
};

/** One running service: the HTTP API, the worker (consumers and scheduled jobs), or both. */
export class SeckillService {
  private server: Server | null = null;
  private metricsServer: Server | null = null;
  /** the express app, once serving (tests walk its routes) */
  httpApp: ReturnType<typeof createHttpApp> | null = null;
  private subscriber: MessageSubscriber | null = null;
  private scheduler: Scheduler | null = null;

  private constructor(
    readonly config: Config,
    readonly container: Container,
    private readonly logger: AppLogger,
    private readonly resources: RealResources | null,
  ) {}

  static async start(
    config: Config,
    roles: Roles,
    logger: AppLogger,
    overrides: ContainerOverrides = {},
  ): Promise<SeckillService> {
    const resources = config.profile === 'real' ? await openRealResources(config, logger) : null;
    const container = buildContainer(config, logger, overrides, resources);
    const service = new SeckillService(config, container, logger, resources);
    // buyers first: the API answers while the worker is still joining its consumer groups
    if (roles.http) await service.startHttp();
    if (roles.worker) await service.startWorker();
    if (roles.worker && !roles.http && config.workerMetricsPort !== null) await service.startWorkerMetrics();
    return service;
  }

  get<T>(id: ServiceIdentifier<T>): T {
    return this.container.get<T>(id);
  }

  /** The base URL a worker's metrics port listens on (with SECKILL_WORKER_METRICS_PORT). */
  get metricsUrl(): string {
    const address = this.metricsServer?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('no worker metrics port is open');
    return `http://127.0.0.1:${address.port}`;
  }

  /** The base URL the HTTP API listens on. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the HTTP API is not running');
    return `http://127.0.0.1:${address.port}`;
  }

  /**
   * Resolves once every accepted reservation has been decided and every release given back to the gate:
   * nothing is being published, and no outbox row waits to be sent or consumed. On the memory profile the
   * bus says so exactly; on the real one the outbox is polled (up to `timeoutMs`).
   */
  async drained(timeoutMs = 60_000): Promise<void> {
    const dispatcher = this.get<OutboxDispatcher>(TYPES.Dispatcher);
    if (this.config.profile === 'memory') {
      const bus = this.get<MemoryMessageBus>(TYPES.MemoryBus);
      do {
        await dispatcher.settle();
        await bus.whenIdle();
      } while (dispatcher.busy);
      return;
    }
    const outbox = this.get<Outbox>(OUTBOX);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await dispatcher.settle();
      const counts = await outbox.countByStatus();
      const open = counts[OutboxStatus.PENDING] + counts[OutboxStatus.SENT] + counts[OutboxStatus.FAILED];
      if (open === 0 && !dispatcher.busy) return;
      if (Date.now() > deadline) throw new Error(`the pipeline still has ${open} outbox rows open`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async listDemoProduct(): Promise<number> {
    const products = this.get<ManageProducts>(TYPES.ManageProducts);
    const product = await products.list(
      {
        name: 'Demo flash-sale item',
        stock: 100,
        perUserLimit: 2,
        maxPerOrder: 1,
        saleStartsAt: null,
        saleEndsAt: null,
      },
      'demo',
    );
    return product.productId;
  }

  async close(): Promise<void> {
    await this.scheduler?.stop();
    // no new connections; idle ones close now, and requests under way get their answers (a buyer whose
    // reservation is being committed learns its fate) before what is left is cut after a grace period
    for (const server of [this.server, this.metricsServer])
      if (server)
        await new Promise<void>((resolve) => {
          const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
          server.close(() => {
            clearTimeout(cut);
            resolve();
          });
          server.closeIdleConnections();
        });
    this.server = null;
    this.metricsServer = null;
    // reservations waiting for their group commit are written (and their buyers answered) before the
    // connections close; then what was committed goes to the broker
    await this.get<PlaceOrder>(TYPES.PlaceOrder).settled();
    await this.get<OutboxDispatcher>(TYPES.Dispatcher).settle();
    await this.subscriber?.stop();
    await this.resources?.close();
  }

  private async startHttp(): Promise<void> {
    const app = createHttpApp({
      placeOrder: this.get(TYPES.PlaceOrder),
      payOrder: this.get(TYPES.PayOrder),
      releaseOrder: this.get(TYPES.ReleaseOrder),
      manageProducts: this.get(TYPES.ManageProducts),
      reconcile: this.get(TYPES.ReconcileStock),
      audit: this.get(TYPES.AuditHistory),
      queries: this.get(TYPES.Queries),
      tokens: this.get<JwtTokens>(TYPES.Tokens),
      health: this.get<HealthCheck[]>(HEALTH_CHECKS),
      observer: observerFor(
        this.get<PrometheusMetrics>(TYPES.PrometheusMetrics),
        this.get<SaleDashboard>(TYPES.SaleDashboard),
        this.logger,
      ),
      logger: this.logger,
      ids: this.get<IdGenerator>(ID_GENERATOR),
      dashboard: this.get<SaleDashboard>(TYPES.SaleDashboard),
      version: VERSION,
      instance: `${hostname()}:${process.pid}`,
    });
    const server = createServer(app);
    server.keepAliveTimeout = 65_000;
    server.on('clientError', answerUnreadableRequest);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => resolve());
    });
    this.server = server;
    this.httpApp = app;
  }

  private async startWorkerMetrics(): Promise<void> {
    const app = createOpsApp({
      health: this.get<HealthCheck[]>(HEALTH_CHECKS),
      observer: observerFor(
        this.get<PrometheusMetrics>(TYPES.PrometheusMetrics),
        this.get<SaleDashboard>(TYPES.SaleDashboard),
        this.logger,
      ),
    });
    const server = createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.workerMetricsPort ?? 0, this.config.host, () => resolve());
    });
    this.metricsServer = server;
    const { port } = server.address() as AddressInfo;
    this.logger.info({ port }, 'worker metrics listening');
  }

  private async startWorker(): Promise<void> {
    const subscriber = this.get<MessageSubscriber>(MESSAGE_SUBSCRIBER);
    const commit = this.get<CommitReservations>(TYPES.CommitReservations);
    const compensate = this.get<CompensateReservation>(TYPES.CompensateReservation);
    const metrics = this.get<PrometheusMetrics>(TYPES.PrometheusMetrics);
    const counted =
      (group: string, handle: (messages: readonly InboundMessage[]) => Promise<void>) =>
      async (messages: readonly InboundMessage[]) => {
        await handle(messages);
        metrics.count('consumer_batches', { group });
        metrics.count('consumer_messages', { group }, messages.length);
      };
    await Promise.all([
      subscriber.subscribe(
        { topic: Topics.ORDERS_RESERVED, groupId: ConsumerGroups.COMMIT },
        counted(ConsumerGroups.COMMIT, (m) => commit.handle(m)),
      ),
      subscriber.subscribe(
        { topic: Topics.STOCK_COMPENSATION, groupId: ConsumerGroups.COMPENSATION },
        counted(ConsumerGroups.COMPENSATION, (m) => compensate.handle(m)),
      ),
    ]);
    this.subscriber = subscriber;

    const scheduler = this.get<Scheduler>(SCHEDULER);
    const relay = this.get<RelayOutbox>(TYPES.RelayOutbox);
    const release = this.get<ReleaseOrder>(TYPES.ReleaseOrder);
    const reconcile = this.get<ReconcileStock>(TYPES.ReconcileStock);
    scheduler.schedule('outbox-relay', { everyMs: this.config.outbox.relayEveryMs }, () => relay.run());
    scheduler.schedule('payment-timeout', { everyMs: this.config.paymentScanMs }, () =>
      release.releaseExpired(),
    );
    scheduler.schedule('reconciliation', { cron: this.config.reconcileCron }, () => reconcile.run());
    await scheduler.start();
    this.scheduler = scheduler;
  }
}
