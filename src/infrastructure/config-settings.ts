// Every setting of the service in one declaration: what the config parses and the docs are checked against.
import { z } from 'zod';

/**
 * The settings, each declared once: the environment variable it is read from, what it may hold and its default,
 * and where it goes in the config (its place in SETTINGS). The config's type is inferred from the declaration
 * (ConfigOf); loadConfig (config.ts) reads the environment with it and works out the derived values.
 * Every variable has a row in docs/operations.md, Settings (test/unit/infrastructure/settings-docs.unit.test.ts).
 */

/** A value of the config read from one environment variable, checked and defaulted by its schema. */
export class Setting<S extends z.ZodType = z.ZodType> {
  constructor(
    readonly env: string,
    readonly schema: S,
  ) {}
}

/** A value of the config that no variable sets: loadConfig works it out from the settings. */
export class Derived<T> {
  declare readonly value: T;
}

type Tree = { readonly [key: string]: Setting | Derived<unknown> | Tree };

/**
 * The config a declaration describes. A setting without a default (its schema takes undefined) is worked out
 * from the others when unset, so the config holds it defined.
 */
export type ConfigOf<T> = Readonly<{
  [K in keyof T]: T[K] extends Setting<infer S>
    ? Exclude<z.output<S>, undefined>
    : T[K] extends Derived<infer V>
      ? V
      : ConfigOf<T[K]>;
}>;

/** What the environment gives for a declaration: the settings as parsed (undefined when unset without a default). */
export type ParsedOf<T> = Readonly<{
  [K in keyof T as T[K] extends Derived<unknown> ? never : K]: T[K] extends Setting<infer S>
    ? z.output<S>
    : ParsedOf<T[K]>;
}>;

const setting = <S extends z.ZodType>(env: string, schema: S): Setting<S> => new Setting(env, schema);
const derived = <T>(): Derived<T> => new Derived<T>();

/** A whole number, `fallback` when unset, at least `min`. */
const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

/** `true` or `false`. */
const flag = () => z.enum(['true', 'false']).transform((value) => value === 'true');

/** An OpenTelemetry variable as given, trimmed; empty or unset: null (as OpenTelemetry's SDKs read them). */
const otelVariable = () =>
  z
    .string()
    .optional()
    .transform((value) => value?.trim() || null);

/**
 * `SECKILL_TRUST_PROXY` as express takes it: a hop count, true/false, or a list of addresses, subnets and
 * names (`loopback`, `uniquelocal`). false: no proxy is trusted, the socket's address is the client's.
 */
const trustProxyOf = (value: string): boolean | number | string => {
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
};

const budget = (points: string, windowSeconds: string, defaultPoints: number) => ({
  points: setting(points, int(defaultPoints)),
  windowSeconds: setting(windowSeconds, int(1, 1)),
});

export const SETTINGS = {
  profile: setting('SECKILL_PROFILE', z.enum(['memory', 'real']).default('memory')),
  port: setting('PORT', int(3000).pipe(z.number().max(65535))),
  /** unset: 0.0.0.0 on the real profile with a secret of one's own, 127.0.0.1 otherwise */
  host: setting('SECKILL_HOST', z.string().optional()),
  /** where CLI commands find a running service (unset: this machine's PORT) */
  serviceUrl: setting('SECKILL_URL', z.url().optional()),
  redisUrl: setting('SECKILL_REDIS_URL', z.string().default('redis://127.0.0.1:6379')),
  mysqlUrl: setting('SECKILL_MYSQL_URL', z.string().default('mysql://root@127.0.0.1:3306/seckill')),
  mysql: {
    /** at most poolMax */
    poolMin: setting('SECKILL_MYSQL_POOL_MIN', int(2)),
    poolMax: setting('SECKILL_MYSQL_POOL_MAX', int(20, 1)),
    connectTimeoutMs: setting('SECKILL_MYSQL_CONNECT_TIMEOUT_MS', int(2_000, 100)),
    acquireTimeoutMs: setting('SECKILL_MYSQL_ACQUIRE_TIMEOUT_MS', int(2_000, 100)),
    operationTimeoutMs: setting('SECKILL_MYSQL_TIMEOUT_MS', int(3_000, 100)),
  },
  redisTimeoutMs: setting('SECKILL_REDIS_TIMEOUT_MS', int(1_000, 50)),
  /** ioredis auto-pipelining on the command connection: fewer reads and writes for Redis under a flood */
  redisAutoPipelining: setting('SECKILL_REDIS_AUTO_PIPELINE', flag().default(true)),
  /** the scheduler's Redis (agenda's keys share one hash tag: one slot on a cluster); unset: SECKILL_REDIS_URL */
  schedulerRedisUrl: setting('SECKILL_SCHEDULER_REDIS_URL', z.string().optional()),
  /** a job run may hold its lock this long before another worker may take it over */
  schedulerLockLifetimeMs: setting('SECKILL_SCHEDULER_LOCK_LIFETIME_MS', int(5 * 60_000, 1_000)),
  /** prefix of every Redis key and channel, to share one Redis between deployments */
  redisNamespace: setting(
    'SECKILL_REDIS_NAMESPACE',
    z
      .string()
      .regex(/^[A-Za-z0-9_.:-]*$/, 'letters, digits and _ . : - only (no braces: they would break hash tags)')
      .default(''),
  ),
  kafka: {
    clientId: setting('SECKILL_KAFKA_CLIENT_ID', z.string().min(1).default('seckill')),
    sessionTimeoutMs: setting('SECKILL_KAFKA_SESSION_TIMEOUT_MS', int(10_000, 1_000)),
    requestTimeoutMs: setting('SECKILL_KAFKA_REQUEST_TIMEOUT_MS', int(5_000, 100)),
    partitionsConsumedConcurrently: setting('SECKILL_KAFKA_CONCURRENCY', int(2, 1)),
    maxBytesPerPartition: setting('SECKILL_KAFKA_MAX_BYTES_PER_PARTITION', int(1_048_576, 1_024)),
    /** a consumer's fetch is answered once this much has arrived, or after fetchMaxWaitMs */
    fetchMinBytes: setting('SECKILL_KAFKA_FETCH_MIN_BYTES', int(1, 1)),
    fetchMaxWaitMs: setting('SECKILL_KAFKA_FETCH_MAX_WAIT_MS', int(1_000, 10)),
    /** create the topics at start (off where the service may not create topics, or on librdkafka's mock) */
    createTopics: setting('SECKILL_KAFKA_CREATE_TOPICS', flag().default(true)),
    partitions: setting('SECKILL_KAFKA_PARTITIONS', int(12, 1)),
    replicationFactor: setting('SECKILL_KAFKA_REPLICATION', int(3, 1)),
    minInsyncReplicas: setting('SECKILL_KAFKA_MIN_INSYNC_REPLICAS', int(2, 1)),
    /** the idempotent producer (off only on a broker without a controller: librdkafka's mock) */
    idempotent: setting('SECKILL_KAFKA_IDEMPOTENT', flag().default(true)),
    /** prefix of every topic and consumer group (`<namespace>.seckill.orders.reserved`); '' for none */
    namespace: setting(
      'SECKILL_KAFKA_NAMESPACE',
      z
        .string()
        .regex(/^[A-Za-z0-9_.-]*$/, 'letters, digits and _ . - only (a Kafka topic name)')
        .default(''),
    ),
  },
  /** the bootstrap list, comma-separated */
  kafkaBrokers: setting(
    'SECKILL_KAFKA_BROKERS',
    z
      .string()
      .default('127.0.0.1:9092')
      .transform((list) =>
        list
          .split(',')
          .map((broker) => broker.trim())
          .filter(Boolean),
      ),
  ),
  /** unset: the development secret on the memory profile; required on the real one */
  jwtSecret: setting(
    'SECKILL_JWT_SECRET',
    z.string().min(32, 'SECKILL_JWT_SECRET must be at least 32 characters').optional(),
  ),
  /** true when no secret was given and the memory profile fell back to the development one */
  usingDevelopmentSecret: derived<boolean>(),
  // HTTP hardening (docs/operations.md): the token policy, then the HTTP server's bounds
  /** what a bearer token must be besides well signed: its longest lifetime, and its iss and aud when set */
  tokenPolicy: {
    maxTtlSeconds: setting('SECKILL_JWT_MAX_TTL_SECONDS', int(86_400, 60)),
    issuer: setting('SECKILL_JWT_ISSUER', z.string().min(1).nullable().default(null)),
    audience: setting('SECKILL_JWT_AUDIENCE', z.string().min(1).nullable().default(null)),
  },
  /** the API server's bounds on a request's arrival, on idle connections and on their number */
  httpServer: {
    /** the whole request (headers and body) must have arrived within this; Node's default is 300 s */
    requestTimeoutMs: setting('SECKILL_HTTP_REQUEST_TIMEOUT_MS', int(10_000, 100)),
    /** its headers within this, at most requestTimeoutMs; Node's default is 60 s */
    headersTimeoutMs: setting('SECKILL_HTTP_HEADERS_TIMEOUT_MS', int(5_000, 100)),
    /** an idle keep-alive connection is closed after this */
    keepAliveTimeoutMs: setting('SECKILL_HTTP_KEEP_ALIVE_TIMEOUT_MS', int(65_000, 100)),
    /** connections beyond this are closed as they are accepted */
    maxConnections: setting('SECKILL_HTTP_MAX_CONNECTIONS', int(10_000, 1)),
  },
  /** a pino level (the logger takes its name as a string) */
  logLevel: setting(
    'SECKILL_LOG_LEVEL',
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .transform((level): string => level),
  ),
  /** unset: true on the memory profile */
  demoProduct: setting('SECKILL_DEMO_PRODUCT', flag().optional()),
  /** order requests per buyer per window (points 0: off) */
  rateLimit: budget('SECKILL_RATE_LIMIT_POINTS', 'SECKILL_RATE_LIMIT_WINDOW_SECONDS', 20),
  /** the other budgets (docs/operations.md, Admission control) and the bound on orders in flight; 0 turns one off */
  admission: {
    /** order and sale path requests per client address; unset points: 200, or 0 with the development secret */
    address: {
      points: setting('SECKILL_ADDRESS_RATE_LIMIT_POINTS', z.coerce.number().int().min(0).optional()),
      windowSeconds: setting('SECKILL_ADDRESS_RATE_LIMIT_WINDOW_SECONDS', int(1, 1)),
    },
    /** payments, cancellations and sale path requests per buyer */
    write: budget('SECKILL_WRITE_RATE_LIMIT_POINTS', 'SECKILL_WRITE_RATE_LIMIT_WINDOW_SECONDS', 10),
    /** reads per buyer (per client address when anonymous) */
    read: budget('SECKILL_READ_RATE_LIMIT_POINTS', 'SECKILL_READ_RATE_LIMIT_WINDOW_SECONDS', 50),
    /** order requests this process works on at once; more are answered 429 at once */
    ordersInFlightMax: setting('SECKILL_ORDERS_IN_FLIGHT_MAX', int(1_024)),
    /** express's `trust proxy`: which hops may name the client in X-Forwarded-For (false: none) */
    trustProxy: setting('SECKILL_TRUST_PROXY', z.string().trim().default('false').transform(trustProxyOf)),
  },
  /** how long a sale path token lasts */
  pathTokenTtlMs: setting('SECKILL_PATH_TOKEN_TTL_MS', int(60_000, 1_000)),
  /** how long a product stays marked sold out in process before the gate is asked again */
  soldOutFlagTtlMs: setting('SECKILL_SOLD_OUT_FLAG_TTL_MS', int(2_000, 10)),
  lockLeaseMs: setting('SECKILL_LOCK_LEASE_MS', int(5_000, 100)),
  /** how long a buyer's Idempotency-Key answers repeats: as long as a sale may last */
  idempotencyKeyTtlMs: setting('SECKILL_IDEMPOTENCY_KEY_TTL_MS', int(24 * 3600_000, 1_000)),
  /** the most live Idempotency-Keys one buyer holds on one product (0: no bound) */
  idempotencyKeysMax: setting('SECKILL_IDEMPOTENCY_KEYS_MAX', int(100)),
  productCacheMs: setting('SECKILL_PRODUCT_CACHE_MS', int(1_000)),
  paymentTimeoutMs: setting('SECKILL_PAYMENT_TIMEOUT_MS', int(15 * 60_000, 1)),
  paymentScanMs: setting('SECKILL_PAYMENT_SCAN_MS', int(30_000, 100)),
  /** how a buyer's order event stream reads the projection, and how long one lasts */
  orderEvents: {
    pollMs: setting('SECKILL_ORDER_EVENTS_POLL_MS', int(250, 10)),
    maxMs: setting('SECKILL_ORDER_EVENTS_MAX_MS', int(15 * 60_000, 1_000)),
    graceMs: setting('SECKILL_ORDER_EVENTS_GRACE_MS', int(60_000)),
    perBuyerMax: setting('SECKILL_ORDER_EVENTS_PER_BUYER', int(3, 1)),
    processMax: setting('SECKILL_ORDER_EVENTS_MAX', int(2_000, 1)),
    ticketTtlMs: setting('SECKILL_ORDER_EVENTS_TICKET_TTL_MS', int(60_000, 1_000)),
  },
  outbox: {
    relayEveryMs: setting('SECKILL_OUTBOX_RELAY_MS', int(5_000, 100)),
    pendingGraceMs: setting('SECKILL_OUTBOX_PENDING_GRACE_MS', int(2_000)),
    staleSentMs: setting('SECKILL_OUTBOX_STALE_SENT_MS', int(5 * 60_000)),
    backoffBaseMs: setting('SECKILL_OUTBOX_BACKOFF_MS', int(1_000)),
    maxAttempts: setting('SECKILL_OUTBOX_MAX_ATTEMPTS', int(10, 1)),
  },
  reconcileCron: setting('SECKILL_RECONCILE_CRON', z.string().default('0 3 * * *')),
  reconcileSettleMs: setting('SECKILL_RECONCILE_SETTLE_MS', int(2_000)),
  auditStaleMs: setting('SECKILL_AUDIT_STALE_MS', int(5 * 60_000, 1)),
  /** the audit replays the history in a worker thread of its own, whose heap goes when the audit ends */
  auditThread: setting('SECKILL_AUDIT_THREAD', flag().default(true)),
  mergeDecrements: setting('SECKILL_MERGE_DECREMENTS', flag().default(true)),
  /** reservations that pass the gate together are written in one transaction */
  groupCommit: {
    maxBatch: setting('SECKILL_GROUP_COMMIT_MAX', int(200, 1)),
    maxWaitMs: setting('SECKILL_GROUP_COMMIT_WAIT_MS', int(2)),
    maxConcurrent: setting('SECKILL_GROUP_COMMIT_CONCURRENCY', int(2, 1)),
  },
  /** committed outbox rows go to the broker in batches: one producer request per batch */
  publish: {
    maxBatch: setting('SECKILL_PUBLISH_BATCH', int(1_000, 1)),
    maxInFlight: setting('SECKILL_PUBLISH_CONCURRENCY', int(1, 1)),
    lingerMs: setting('SECKILL_PUBLISH_LINGER_MS', int(5)),
  },
  consumerBatchSize: setting('SECKILL_CONSUMER_BATCH', int(200, 1)),
  metrics: {
    /** a listener of its own for /metrics, /healthz and /readyz, without a credential (null: none; 0: any free port) */
    port: setting('SECKILL_METRICS_PORT', z.coerce.number().int().min(0).max(65535).nullable().default(null)),
    host: setting('SECKILL_METRICS_HOST', z.string().min(1).default('127.0.0.1')),
    /** what opens /metrics on the API port; null: it is closed there */
    token: setting(
      'SECKILL_METRICS_TOKEN',
      z
        .string()
        .min(16, 'SECKILL_METRICS_TOKEN must be at least 16 characters')
        .regex(/^\S+$/, 'SECKILL_METRICS_TOKEN must not contain spaces')
        .nullable()
        .default(null),
    ),
    /** the gauges read from Redis, MySQL and the broker are sampled this often, whatever the scrape rate */
    sampleEveryMs: setting('SECKILL_METRICS_SAMPLE_MS', int(5_000, 100)),
  },
  /** how often this process beats into the instance registry (the dashboard's instances) */
  instanceBeatMs: setting('SECKILL_INSTANCE_BEAT_MS', int(1_000, 100)),
  /**
   * OpenTelemetry tracing, exported to Zipkin: off unless an endpoint is given, by the service's variables or by
   * OpenTelemetry's own (OTEL_TRACES_EXPORTER=zipkin); the service's win where both are set
   */
  tracing: {
    zipkinUrl: setting('SECKILL_OTEL_ZIPKIN_URL', z.string().url().nullable().default(null)),
    sampleRatio: setting(
      'SECKILL_OTEL_SAMPLE_RATIO',
      z.coerce.number().min(0).max(1).nullable().default(null),
    ),
    serviceName: setting('SECKILL_OTEL_SERVICE_NAME', z.string().min(1).nullable().default(null)),
    /** OpenTelemetry's own variables, as given (an empty one is unset): read only when they are used (otel-env.ts) */
    standard: {
      disabled: setting('OTEL_SDK_DISABLED', otelVariable()),
      exporter: setting('OTEL_TRACES_EXPORTER', otelVariable()),
      zipkinEndpoint: setting('OTEL_EXPORTER_ZIPKIN_ENDPOINT', otelVariable()),
      sampler: setting('OTEL_TRACES_SAMPLER', otelVariable()),
      samplerArg: setting('OTEL_TRACES_SAMPLER_ARG', otelVariable()),
      serviceName: setting('OTEL_SERVICE_NAME', otelVariable()),
    },
  },
  /** the tracing the process runs with, worked out from the settings above (null: off) */
  tracingOn: derived<TracingSettings | null>(),
} satisfies Tree;

export type TracingSettings = Readonly<{
  zipkinUrl: string;
  sampleRatio: number;
  /** null: `seckill-<role>` */
  serviceName: string | null;
}>;

/** Every setting of the declaration, with its place in the config. */
export const settingsOf = (
  tree: Tree = SETTINGS,
  path: readonly string[] = [],
): { path: string[]; setting: Setting }[] =>
  Object.entries(tree).flatMap(([key, node]) => {
    if (node instanceof Setting) return [{ path: [...path, key], setting: node }];
    if (node instanceof Derived) return [];
    return settingsOf(node, [...path, key]);
  });

/** The declaration's tree with each setting replaced by its value in `values` (keyed by variable), derived values left out. */
export const placeValues = (
  values: Readonly<Record<string, unknown>>,
  tree: Tree = SETTINGS,
): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(tree).flatMap(([key, node]) => {
      if (node instanceof Derived) return [];
      return [[key, node instanceof Setting ? values[node.env] : placeValues(values, node)]];
    }),
  );
