// The process in start order: the listeners, the worker's consumers and jobs, and an orderly stop.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { createHttpApp, type HttpApp } from '../adapters/http/app.js';
import { answerUnreadableRequest } from '../adapters/http/error-mapping.js';
import { createOpsApp } from '../adapters/http/ops.js';
import { JwtTokens } from '../adapters/http/tokens.js';
import { type OtelTracing, startOtelTracing } from '../adapters/otel/otel-tracer.js';
import { type InstanceRole, ReadinessProbe } from '../application/index.js';
import type { Application } from './compose.js';
import { type Config, isLoopback } from './config.js';
import {
  APPLICATION,
  buildContainer,
  type Container,
  type ContainerOverrides,
  WORKER,
  type WorkerPorts,
} from './container.js';
import { InstanceHeartbeat } from './heartbeat.js';
import { prometheusObserver } from './http-observer.js';
import type { AppLogger } from './logger.js';
import { GaugeSampler, PrometheusMetrics } from './metrics.js';
import { openRealResources, type RealResources } from './real-resources.js';

/** /readyz gives a dependency this long to answer */
const READINESS_CHECK_TIMEOUT_MS = 2_000;
/** and answers a round of checks again for this long */
const READINESS_MAX_AGE_MS = 1_000;

export type Roles = Readonly<{ http: boolean; worker: boolean }>;

/** how long a stopping service waits for its last spans to reach Zipkin */
const TRACING_SHUTDOWN_MS = 3_000;

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

/** OpenTelemetry's SDK for this process when tracing is on; the process is named by its role by default. */
const startTracing = (config: Config, role: InstanceRole, logger: AppLogger): OtelTracing | null => {
  const on = config.tracingOn;
  if (on === null) return null;
  const serviceName = on.serviceName ?? `seckill-${role}`;
  logger.info({ zipkin: on.zipkinUrl, sampleRatio: on.sampleRatio, serviceName }, 'tracing on');
  return startOtelTracing({ serviceName, zipkinUrl: on.zipkinUrl, sampleRatio: on.sampleRatio });
};

/** What a process with these roles is called on the dashboard. */
const roleOf = (roles: Roles): InstanceRole => {
  if (roles.http && roles.worker) return 'all';
  return roles.http ? 'api' : 'worker';
};

/** The base URL of a listening server, as this machine reaches it (a wildcard address through loopback). */
const baseUrlOf = (server: Server | null, what: string): string => {
  const address = server?.address() as AddressInfo | null | undefined;
  if (!address) throw new Error(what);
  const { address: host, port } = address;
  if (host === '0.0.0.0' || host === '::') return `http://127.0.0.1:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
};

/** Node's default is 2,000; a request of this API has about a dozen, a browser's and a proxy's a few more. */
const MAX_HEADERS_COUNT = 100;

/**
 * The API's server, bounded for a flash sale (docs/operations.md, "HTTP hardening"): a request must arrive
 * within seconds, not Node's 5 minutes, so that slow or stalled clients cannot hold the connections the flood
 * needs; a request cut that way is answered 408 (answerUnreadableRequest). The bounds apply to receiving the
 * request only: an answer may last (the order event stream does).
 */
const createHttpServer = (limits: Config['httpServer'], app: RequestListener): Server => {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // how often Node looks for requests over those bounds (30 s by default): a cut is at most a quarter late
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(limits.headersTimeoutMs / 4)),
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  return server;
};

/** Connections closed for being over SECKILL_HTTP_MAX_CONNECTIONS, said at most every 10 s with their count. */
const warnOfDroppedConnections = (server: Server, logger: AppLogger): void => {
  let dropped = 0;
  let saidAt = 0;
  server.on('drop', () => {
    dropped += 1;
    if (Date.now() - saidAt < 10_000) return;
    logger.warn(
      { dropped, maxConnections: server.maxConnections },
      'connections closed as they came: SECKILL_HTTP_MAX_CONNECTIONS reached',
    );
    saidAt = Date.now();
    dropped = 0;
  });
};

const listen = (server: Server, port: number, host: string): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });

/** No new connections; idle ones close now, and requests under way get their answers before a grace period ends. */
const closeGracefully = (server: Server): Promise<void> =>
  new Promise<void>((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });

/** One running service: the HTTP API, the worker (consumers and scheduled jobs), or both. */
export class SeckillService {
  private server: Server | null = null;
  private metricsServer: Server | null = null;
  /** the express app, once serving (tests walk its routes) */
  httpApp: HttpApp['express'] | null = null;
  private worker: WorkerPorts | null = null;
  /** keeps the gauges from Redis, MySQL and the broker current while this process serves metrics */
  private readonly sampler: GaugeSampler;
  /** says in the instance registry that this process is alive, and how it is doing (every serving process) */
  private heartbeat: InstanceHeartbeat | null = null;
  private probe: ReadinessProbe | null = null;
  /** OpenTelemetry's SDK, when tracing is on: flushed and shut down last */
  private tracing: OtelTracing | null = null;
  /** host:pid:random, for the life of this process: how the dashboard tells the instances apart */
  readonly instanceId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  private constructor(
    readonly config: Config,
    /** the composition root, which built `app` (tests read the memory profile's tables from it) */
    readonly container: Container,
    /** every use case and port of this process, resolved once from the container (a worker adds WORKER) */
    readonly app: Application,
    private readonly metrics: PrometheusMetrics,
    private readonly logger: AppLogger,
    private readonly resources: RealResources | null,
  ) {
    this.sampler = new GaugeSampler(
      () => app.dashboard.refreshGauges(),
      config.metrics.sampleEveryMs,
      logger,
    );
  }

  static async start(
    config: Config,
    roles: Roles,
    logger: AppLogger,
    overrides: ContainerOverrides = {},
  ): Promise<SeckillService> {
    const resources = config.profile === 'real' ? await openRealResources(config, logger) : null;
    const metrics = new PrometheusMetrics();
    const tracing = startTracing(config, roleOf(roles), logger);
    const container = buildContainer(config, {
      logger,
      metrics,
      resources,
      overrides,
      tracer: tracing?.tracer,
    });
    const app = container.get<Application>(APPLICATION);
    const service = new SeckillService(config, container, app, metrics, logger, resources);
    service.tracing = tracing;
    // buyers first: the API answers while the worker is still joining its consumer groups
    if (roles.http) await service.startHttp();
    if (roles.worker) await service.startWorker();
    const serving = roles.http || roles.worker;
    if (serving) service.startHeartbeat(roleOf(roles));
    if (serving && config.metrics.port !== null) await service.startMetricsListener();
    // the gauges are read only where someone can scrape them
    if ((roles.http && config.metrics.token !== null) || service.metricsServer) service.sampler.start();
    else if (serving)
      logger.info(
        {},
        roles.http
          ? 'metrics are not served: set SECKILL_METRICS_TOKEN (GET /metrics on the API port) or SECKILL_METRICS_PORT'
          : 'metrics are not served: set SECKILL_METRICS_PORT',
      );
    return service;
  }

  /** The base URL of the metrics listener (SECKILL_METRICS_PORT). */
  get metricsUrl(): string {
    return baseUrlOf(this.metricsServer, 'no metrics port is open (SECKILL_METRICS_PORT is not set)');
  }

  /** The base URL the HTTP API listens on. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the HTTP API is not running');
    return `http://127.0.0.1:${address.port}`;
  }

  async close(): Promise<void> {
    try {
      await this.stopWork();
    } finally {
      // the last spans go to Zipkin, a failed stop's too; an unreachable Zipkin holds the exit up a few seconds at most
      await this.stopTracing();
    }
  }

  private async stopWork(): Promise<void> {
    // a reading under way ends before the connections it reads close
    await this.sampler.stop();
    await this.worker?.scheduler.stop();
    // requests under way get their answers (a buyer whose reservation is being committed learns its fate)
    for (const server of [this.server, this.metricsServer]) if (server) await closeGracefully(server);
    this.server = null;
    this.metricsServer = null;
    // reservations waiting for their group commit are written (and their buyers answered) before the
    // connections close; then what was committed goes to the broker
    await this.app.placeOrder.settled();
    await this.app.dispatcher.settle();
    await this.app.relay.recovered();
    await this.worker?.subscriber.stop();
    // beating until the work under way is done: the dashboard shows the instance while it drains
    await this.heartbeat?.stop();
    await this.resources?.close();
  }

  private async stopTracing(): Promise<void> {
    const tracing = this.tracing;
    this.tracing = null;
    if (!tracing) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, TRACING_SHUTDOWN_MS);
    });
    await Promise.race([tracing.shutdown().catch(() => undefined), limit]);
    clearTimeout(timer);
  }

  private startHeartbeat(role: InstanceRole): void {
    const { ports } = this.app;
    this.heartbeat = new InstanceHeartbeat({
      registry: ports.instances,
      identity: {
        instanceId: this.instanceId,
        role,
        pid: process.pid,
        host: hostname(),
        startedAt: ports.clock.now(),
      },
      everyMs: this.config.instanceBeatMs,
      health: ports.health,
      counts: () => this.metrics.instanceCounts(),
      logger: this.logger,
    });
    this.heartbeat.start();
  }

  private observer() {
    return prometheusObserver(this.metrics);
  }

  /** One probe for both listeners: /readyz asks the dependencies at most about once a second. */
  private readinessProbe(): ReadinessProbe {
    this.probe ??= new ReadinessProbe(this.app.ports.health, {
      timeoutMs: READINESS_CHECK_TIMEOUT_MS,
      maxAgeMs: READINESS_MAX_AGE_MS,
    });
    return this.probe;
  }

  private async startHttp(): Promise<void> {
    const { app } = this;
    const httpApp = createHttpApp({
      placeOrder: app.placeOrder,
      payOrder: app.payOrder,
      releaseOrder: app.releaseOrder,
      manageProducts: app.products,
      reconcile: app.reconcile,
      audit: app.audit,
      queries: app.queries,
      watchOrder: app.watchOrder,
      salePath: app.salePath,
      tokens: new JwtTokens(this.config.jwtSecret, this.config.tokenPolicy),
      budgets: app.ports.budgets,
      ordersInFlightMax: this.config.admission.ordersInFlightMax,
      trustProxy: this.config.admission.trustProxy,
      readinessProbe: this.readinessProbe(),
      observer: this.observer(),
      logger: this.logger,
      ids: app.ports.ids,
      dashboard: app.dashboard,
      version: VERSION,
      instance: `${hostname()}:${process.pid}`,
      metricsToken: this.config.metrics.token,
      tracer: app.ports.tracer,
      // the development secret forces a loopback address (config.ts): the demo's sign-in is this machine's
      devLogin: this.config.usingDevelopmentSecret && isLoopback(this.config.host),
    });
    const server = createHttpServer(this.config.httpServer, httpApp.listener);
    server.on('clientError', answerUnreadableRequest);
    warnOfDroppedConnections(server, this.logger);
    await listen(server, this.config.port, this.config.host);
    this.server = server;
    this.httpApp = httpApp.express;
  }

  /**
   * /metrics, /healthz and /readyz without a credential, for an API process and a worker alike. On loopback it
   * is the operator's port, and /readyz names what fails; bound wider, only an admin token reads that.
   */
  private async startMetricsListener(): Promise<void> {
    const { port, host } = this.config.metrics;
    const opsApp = createOpsApp(
      {
        readinessProbe: this.readinessProbe(),
        observer: this.observer(),
        metrics: { kind: 'open' },
        readiness: isLoopback(host)
          ? { kind: 'everyone' }
          : { kind: 'admins', tokens: new JwtTokens(this.config.jwtSecret, this.config.tokenPolicy) },
      },
      this.logger,
    );
    // the API's bounds: a slow or crowding client holds this port no longer than the API's
    const server = createHttpServer(this.config.httpServer, opsApp);
    server.on('clientError', answerUnreadableRequest);
    warnOfDroppedConnections(server, this.logger);
    await listen(server, port ?? 0, host);
    this.metricsServer = server;
    this.logger.info({ url: this.metricsUrl }, 'metrics listening');
  }

  private async startWorker(): Promise<void> {
    const worker = this.container.get<WorkerPorts>(WORKER);
    this.worker = worker;
    // recovery at start: what earlier processes committed and never published is sent now, and again whenever
    // this worker is given partitions (a worker that died leaves its rows to the ones that take them over)
    const recover = (reason: string) => void this.app.relay.recoverSoon(reason);
    await Promise.all(
      this.app.consumers.map(({ topic, groupId, handle }) =>
        worker.subscriber.subscribe(
          { topic, groupId, onAssigned: () => recover(`${groupId} partitions assigned`) },
          handle,
        ),
      ),
    );
    recover('worker started');
    for (const job of this.app.jobs) worker.scheduler.schedule(job.name, job.when, job.run);
    await worker.scheduler.start();
  }
}
