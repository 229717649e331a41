import { z } from 'zod';

const DEVELOPMENT_SECRET = 'seckill-development-secret-not-for-production';

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const EnvSchema = z.object({
  SECKILL_PROFILE: z.enum(['memory', 'real']).default('memory'),
  PORT: intFrom(3000).pipe(z.number().max(65535)),
  /** unset: 127.0.0.1 with the development secret, 0.0.0.0 with a secret of one's own (hostOf) */
  SECKILL_HOST: z.string().optional(),
  SECKILL_URL: z.url().optional(),
  SECKILL_REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  SECKILL_MYSQL_URL: z.string().default('mysql://root@127.0.0.1:3306/seckill'),
  SECKILL_MYSQL_POOL_MIN: intFrom(2),
  SECKILL_MYSQL_POOL_MAX: intFrom(20, 1),
  SECKILL_MYSQL_CONNECT_TIMEOUT_MS: intFrom(2_000, 100),
  SECKILL_MYSQL_ACQUIRE_TIMEOUT_MS: intFrom(2_000, 100),
  SECKILL_MYSQL_TIMEOUT_MS: intFrom(3_000, 100),
  SECKILL_REDIS_TIMEOUT_MS: intFrom(1_000, 50),
  SECKILL_REDIS_AUTO_PIPELINE: z.enum(['true', 'false']).default('true'),
  SECKILL_SCHEDULER_REDIS_URL: z.string().optional(),
  SECKILL_SCHEDULER_LOCK_LIFETIME_MS: intFrom(5 * 60_000, 1_000),
  SECKILL_REDIS_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]*$/, 'letters, digits and _ . : - only (no braces: they would break hash tags)')
    .default(''),
  SECKILL_KAFKA_CLIENT_ID: z.string().min(1).default('seckill'),
  SECKILL_KAFKA_SESSION_TIMEOUT_MS: intFrom(10_000, 1_000),
  SECKILL_KAFKA_REQUEST_TIMEOUT_MS: intFrom(5_000, 100),
  SECKILL_KAFKA_CONCURRENCY: intFrom(2, 1),
  SECKILL_KAFKA_MAX_BYTES_PER_PARTITION: intFrom(1_048_576, 1_024),
  SECKILL_KAFKA_FETCH_MIN_BYTES: intFrom(1, 1),
  SECKILL_KAFKA_FETCH_MAX_WAIT_MS: intFrom(1_000, 10),
  SECKILL_KAFKA_CREATE_TOPICS: z.enum(['true', 'false']).default('true'),
  SECKILL_KAFKA_PARTITIONS: intFrom(12, 1),
  SECKILL_KAFKA_REPLICATION: intFrom(3, 1),
  SECKILL_KAFKA_MIN_INSYNC_REPLICAS: intFrom(2, 1),
  SECKILL_KAFKA_IDEMPOTENT: z.enum(['true', 'false']).default('true'),
  SECKILL_KAFKA_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_.-]*$/, 'letters, digits and _ . - only (a Kafka topic name)')
    .default(''),
  SECKILL_KAFKA_BROKERS: z.string().default('127.0.0.1:9092'),
  SECKILL_JWT_SECRET: z.string().min(32, 'SECKILL_JWT_SECRET must be at least 32 characters').optional(),
  // HTTP hardening (docs/operations.md): the token policy, then the HTTP server's bounds
  SECKILL_JWT_MAX_TTL_SECONDS: intFrom(86_400, 60),
  SECKILL_JWT_ISSUER: z.string().min(1).optional(),
  SECKILL_JWT_AUDIENCE: z.string().min(1).optional(),
  SECKILL_HTTP_REQUEST_TIMEOUT_MS: intFrom(10_000, 100),
  SECKILL_HTTP_HEADERS_TIMEOUT_MS: intFrom(5_000, 100),
  SECKILL_HTTP_KEEP_ALIVE_TIMEOUT_MS: intFrom(65_000, 100),
  SECKILL_HTTP_MAX_CONNECTIONS: intFrom(10_000, 1),
  SECKILL_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SECKILL_DEMO_PRODUCT: z.enum(['true', 'false']).optional(),
  SECKILL_RATE_LIMIT_POINTS: intFrom(20),
  SECKILL_RATE_LIMIT_WINDOW_SECONDS: intFrom(1, 1),
  SECKILL_ADDRESS_RATE_LIMIT_POINTS: z.coerce.number().int().min(0).optional(),
  SECKILL_ADDRESS_RATE_LIMIT_WINDOW_SECONDS: intFrom(1, 1),
  SECKILL_WRITE_RATE_LIMIT_POINTS: intFrom(10),
  SECKILL_WRITE_RATE_LIMIT_WINDOW_SECONDS: intFrom(1, 1),
  SECKILL_READ_RATE_LIMIT_POINTS: intFrom(50),
  SECKILL_READ_RATE_LIMIT_WINDOW_SECONDS: intFrom(1, 1),
  SECKILL_ORDERS_IN_FLIGHT_MAX: intFrom(1_024),
  SECKILL_TRUST_PROXY: z.string().trim().optional(),
  SECKILL_PATH_TOKEN_TTL_MS: intFrom(60_000, 1_000),
  SECKILL_SOLD_OUT_FLAG_TTL_MS: intFrom(2_000, 10),
  SECKILL_LOCK_LEASE_MS: intFrom(5_000, 100),
  SECKILL_IDEMPOTENCY_KEY_TTL_MS: intFrom(24 * 3600_000, 1_000),
  SECKILL_IDEMPOTENCY_KEYS_MAX: intFrom(100),
  SECKILL_PRODUCT_CACHE_MS: intFrom(1_000),
  SECKILL_PAYMENT_TIMEOUT_MS: intFrom(15 * 60_000, 1),
  SECKILL_PAYMENT_SCAN_MS: intFrom(30_000, 100),
  SECKILL_ORDER_EVENTS_POLL_MS: intFrom(250, 10),
  SECKILL_ORDER_EVENTS_MAX_MS: intFrom(15 * 60_000, 1_000),
  SECKILL_ORDER_EVENTS_GRACE_MS: intFrom(60_000),
  SECKILL_ORDER_EVENTS_PER_BUYER: intFrom(3, 1),
  SECKILL_ORDER_EVENTS_MAX: intFrom(2_000, 1),
  SECKILL_ORDER_EVENTS_TICKET_TTL_MS: intFrom(60_000, 1_000),
  SECKILL_OUTBOX_RELAY_MS: intFrom(5_000, 100),
  SECKILL_OUTBOX_PENDING_GRACE_MS: intFrom(2_000),
  SECKILL_OUTBOX_STALE_SENT_MS: intFrom(5 * 60_000),
  SECKILL_OUTBOX_BACKOFF_MS: intFrom(1_000),
  SECKILL_OUTBOX_MAX_ATTEMPTS: intFrom(10, 1),
  SECKILL_RECONCILE_CRON: z.string().default('0 3 * * *'),
  SECKILL_RECONCILE_SETTLE_MS: intFrom(2_000),
  SECKILL_AUDIT_STALE_MS: intFrom(5 * 60_000, 1),
  SECKILL_MERGE_DECREMENTS: z.enum(['true', 'false']).default('true'),
  SECKILL_GROUP_COMMIT_MAX: intFrom(200, 1),
  SECKILL_GROUP_COMMIT_WAIT_MS: intFrom(2),
  SECKILL_GROUP_COMMIT_CONCURRENCY: intFrom(2, 1),
  SECKILL_PUBLISH_BATCH: intFrom(1_000, 1),
  SECKILL_PUBLISH_CONCURRENCY: intFrom(1, 1),
  SECKILL_PUBLISH_LINGER_MS: intFrom(5),
  SECKILL_CONSUMER_BATCH: intFrom(200, 1),
  /** deprecated alias of SECKILL_METRICS_PORT */
  SECKILL_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).nullable().default(null),
  /** a listener of its own for /metrics, /healthz and /readyz, without a credential (unset: none; 0: any free port) */
  SECKILL_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SECKILL_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** the credential that opens /metrics on the API port (unset: closed there) */
  SECKILL_METRICS_TOKEN: z
    .string()
    .min(16, 'SECKILL_METRICS_TOKEN must be at least 16 characters')
    .regex(/^\S+$/, 'SECKILL_METRICS_TOKEN must not contain spaces')
    .nullable()
    .default(null),
  SECKILL_METRICS_SAMPLE_MS: intFrom(5_000, 100),
  /** every process says it is alive this often, for the dashboard's instances */
  SECKILL_INSTANCE_BEAT_MS: intFrom(1_000, 100),
});

export type Profile = 'memory' | 'real';

/** Calls allowed per key per window. */
export type Budget = Readonly<{ points: number; windowSeconds: number }>;

/**
 * `SECKILL_TRUST_PROXY` as express takes it: a hop count, true/false, or a list of addresses, subnets and
 * names (`loopback`, `uniquelocal`). Unset: no proxy is trusted, the socket's address is the client's.
 */
const trustProxyOf = (value: string | undefined): boolean | number | string => {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
};

export type Config = Readonly<{
  profile: Profile;
  port: number;
  host: string;
  /** where CLI commands find a running service */
  serviceUrl: string;
  redisUrl: string;
  mysqlUrl: string;
  mysql: Readonly<{
    poolMin: number;
    poolMax: number;
    connectTimeoutMs: number;
    acquireTimeoutMs: number;
    operationTimeoutMs: number;
  }>;
  redisTimeoutMs: number;
  /** ioredis auto-pipelining on the command connection: fewer reads and writes for Redis under a flood */
  redisAutoPipelining: boolean;
  /** agenda's Redis: a single node (its locking needs every key on one server) */
  schedulerRedisUrl: string;
  /** a job run may hold its lock this long before another worker may take it over */
  schedulerLockLifetimeMs: number;
  /** prefix of every Redis key and channel, to share one Redis between deployments */
  redisNamespace: string;
  kafka: Readonly<{
    clientId: string;
    sessionTimeoutMs: number;
    requestTimeoutMs: number;
    partitionsConsumedConcurrently: number;
    maxBytesPerPartition: number;
    /** a consumer's fetch is answered once this much has arrived, or after fetchMaxWaitMs */
    fetchMinBytes: number;
    fetchMaxWaitMs: number;
    /** create the topics at start (off where the service may not create topics, or on librdkafka's mock) */
    createTopics: boolean;
    partitions: number;
    replicationFactor: number;
    minInsyncReplicas: number;
    /** the idempotent producer (off only on a broker without a controller: librdkafka's mock) */
    idempotent: boolean;
    /** prefix of every topic and consumer group (`<namespace>.seckill.orders.reserved`); '' for none */
    namespace: string;
  }>;
  kafkaBrokers: string[];
  jwtSecret: string;
  /** true when no secret was given and the memory profile fell back to the development one */
  usingDevelopmentSecret: boolean;
  /** what a bearer token must be besides well signed: its longest lifetime, and its iss and aud when set */
  tokenPolicy: Readonly<{ maxTtlSeconds: number; issuer: string | null; audience: string | null }>;
  /** the API server's bounds on a request's arrival, on idle connections and on their number */
  httpServer: Readonly<{
    /** the whole request (headers and body) must have arrived within this; Node's default is 300 s */
    requestTimeoutMs: number;
    /** its headers within this; Node's default is 60 s */
    headersTimeoutMs: number;
    /** an idle keep-alive connection is closed after this */
    keepAliveTimeoutMs: number;
    /** connections beyond this are closed as they are accepted */
    maxConnections: number;
  }>;
  logLevel: string;
  demoProduct: boolean;
  /** order requests per buyer per window (points 0: off) */
  rateLimit: Budget;
  /** the other budgets (docs/operations.md, Admission control) and the bound on orders in flight; 0 turns one off */
  admission: Readonly<{
    /** order and sale path requests per client address */
    address: Budget;
    /** payments, cancellations and sale path requests per buyer */
    write: Budget;
    /** reads per buyer (per client address when anonymous) */
    read: Budget;
    /** order requests this process works on at once; more are answered 429 at once */
    ordersInFlightMax: number;
    /** express's `trust proxy`: which hops may name the client in X-Forwarded-For (false: none) */
    trustProxy: boolean | number | string;
  }>;
  /** how long a sale path token lasts */
  pathTokenTtlMs: number;
  /** how long a product stays marked sold out in process before the gate is asked again */
  soldOutFlagTtlMs: number;
  lockLeaseMs: number;
  /** how long a buyer's Idempotency-Key answers repeats: as long as a sale may last */
  idempotencyKeyTtlMs: number;
  /** the most live Idempotency-Keys one buyer holds on one product (0: no bound) */
  idempotencyKeysMax: number;
  productCacheMs: number;
  paymentTimeoutMs: number;
  paymentScanMs: number;
  /** how a buyer's order event stream reads the projection, and how long one lasts */
  orderEvents: Readonly<{
    pollMs: number;
    maxMs: number;
    graceMs: number;
    perBuyerMax: number;
    processMax: number;
    ticketTtlMs: number;
  }>;
  outbox: Readonly<{
    relayEveryMs: number;
    pendingGraceMs: number;
    staleSentMs: number;
    backoffBaseMs: number;
    maxAttempts: number;
  }>;
  reconcileCron: string;
  reconcileSettleMs: number;
  auditStaleMs: number;
  mergeDecrements: boolean;
  /** reservations that pass the gate together are written in one transaction */
  groupCommit: Readonly<{ maxBatch: number; maxWaitMs: number; maxConcurrent: number }>;
  /** committed outbox rows go to the broker in batches: one producer request per batch */
  publish: Readonly<{ maxBatch: number; maxInFlight: number; lingerMs: number }>;
  consumerBatchSize: number;
  metrics: Readonly<{
    /** the metrics listener's port (SECKILL_METRICS_PORT, or its alias SECKILL_WORKER_METRICS_PORT); null: none */
    port: number | null;
    host: string;
    /** what opens /metrics on the API port; null: it is closed there */
    token: string | null;
    /** the gauges read from Redis, MySQL and the broker are sampled this often, whatever the scrape rate */
    sampleEveryMs: number;
  }>;
  /** how often this process beats into the instance registry (the dashboard's instances) */
  instanceBeatMs: number;
}>;

type Env = z.output<typeof EnvSchema>;

/** 127.0.0.0/8, ::1 and localhost, however spelled (the URL parser writes each address one way). */
export const isLoopback = (host: string): boolean => {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let hostname: string;
  try {
    hostname = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return false;
  }
  return (
    hostname === 'localhost' ||
    /^127\./.test(hostname) ||
    /^\[(::1|::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4})\]$/.test(hostname)
  );
};

/**
 * Where the API listens. The development secret is public (it is in this file): a service that signs with it
 * serves this machine only, by default and by force. The memory profile keeps nothing when it stops, a demo's
 * or a test's: it too serves this machine unless told otherwise, whatever the secret. The real profile with a
 * secret of its own is a deployment: every interface.
 */
const hostOf = (e: Env): string => {
  if (e.SECKILL_JWT_SECRET) return e.SECKILL_HOST ?? (e.SECKILL_PROFILE === 'real' ? '0.0.0.0' : '127.0.0.1');
  const host = e.SECKILL_HOST ?? '127.0.0.1';
  if (!isLoopback(host))
    throw new ConfigError(
      `SECKILL_HOST=${JSON.stringify(host)} would let other machines in while tokens are signed with the public development secret (anyone could mint an admin token): set SECKILL_JWT_SECRET to a secret of your own (at least 32 characters), or listen on 127.0.0.1`,
    );
  return host;
};

const tokenPolicyOf = (e: Env): Config['tokenPolicy'] => ({
  maxTtlSeconds: e.SECKILL_JWT_MAX_TTL_SECONDS,
  issuer: e.SECKILL_JWT_ISSUER ?? null,
  audience: e.SECKILL_JWT_AUDIENCE ?? null,
});

const httpServerOf = (e: Env): Config['httpServer'] => {
  // Node refuses a server whose headers may take longer than the whole request
  if (e.SECKILL_HTTP_HEADERS_TIMEOUT_MS > e.SECKILL_HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError(
      `SECKILL_HTTP_HEADERS_TIMEOUT_MS (${e.SECKILL_HTTP_HEADERS_TIMEOUT_MS}) must not be longer than SECKILL_HTTP_REQUEST_TIMEOUT_MS (${e.SECKILL_HTTP_REQUEST_TIMEOUT_MS})`,
    );
  return {
    requestTimeoutMs: e.SECKILL_HTTP_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.SECKILL_HTTP_HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: e.SECKILL_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: e.SECKILL_HTTP_MAX_CONNECTIONS,
  };
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The budgets and the bound on orders in flight (docs/operations.md, Admission control). */
const admissionOf = (e: z.infer<typeof EnvSchema>): Config['admission'] => ({
  address: {
    // with the development secret the service listens on loopback alone: every client has a local address,
    // and one budget for all of them would be a budget for the whole machine
    points: e.SECKILL_ADDRESS_RATE_LIMIT_POINTS ?? (e.SECKILL_JWT_SECRET ? 200 : 0),
    windowSeconds: e.SECKILL_ADDRESS_RATE_LIMIT_WINDOW_SECONDS,
  },
  write: {
    points: e.SECKILL_WRITE_RATE_LIMIT_POINTS,
    windowSeconds: e.SECKILL_WRITE_RATE_LIMIT_WINDOW_SECONDS,
  },
  read: {
    points: e.SECKILL_READ_RATE_LIMIT_POINTS,
    windowSeconds: e.SECKILL_READ_RATE_LIMIT_WINDOW_SECONDS,
  },
  ordersInFlightMax: e.SECKILL_ORDERS_IN_FLIGHT_MAX,
  trustProxy: trustProxyOf(e.SECKILL_TRUST_PROXY),
});

/** Reads the environment into a typed config; a bad value stops the process with the variable named. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.SECKILL_PROFILE === 'real' && !e.SECKILL_JWT_SECRET)
    throw new ConfigError('SECKILL_JWT_SECRET is required on the real profile');
  return {
    profile: e.SECKILL_PROFILE,
    port: e.PORT,
    host: hostOf(e),
    serviceUrl: e.SECKILL_URL ?? `http://127.0.0.1:${e.PORT}`,
    redisUrl: e.SECKILL_REDIS_URL,
    mysqlUrl: e.SECKILL_MYSQL_URL,
    mysql: {
      poolMin: Math.min(e.SECKILL_MYSQL_POOL_MIN, e.SECKILL_MYSQL_POOL_MAX),
      poolMax: e.SECKILL_MYSQL_POOL_MAX,
      connectTimeoutMs: e.SECKILL_MYSQL_CONNECT_TIMEOUT_MS,
      acquireTimeoutMs: e.SECKILL_MYSQL_ACQUIRE_TIMEOUT_MS,
      operationTimeoutMs: e.SECKILL_MYSQL_TIMEOUT_MS,
    },
    redisTimeoutMs: e.SECKILL_REDIS_TIMEOUT_MS,
    redisAutoPipelining: e.SECKILL_REDIS_AUTO_PIPELINE === 'true',
    redisNamespace: e.SECKILL_REDIS_NAMESPACE,
    schedulerRedisUrl: e.SECKILL_SCHEDULER_REDIS_URL ?? e.SECKILL_REDIS_URL,
    schedulerLockLifetimeMs: e.SECKILL_SCHEDULER_LOCK_LIFETIME_MS,
    kafka: {
      clientId: e.SECKILL_KAFKA_CLIENT_ID,
      sessionTimeoutMs: e.SECKILL_KAFKA_SESSION_TIMEOUT_MS,
      requestTimeoutMs: e.SECKILL_KAFKA_REQUEST_TIMEOUT_MS,
      partitionsConsumedConcurrently: e.SECKILL_KAFKA_CONCURRENCY,
      maxBytesPerPartition: e.SECKILL_KAFKA_MAX_BYTES_PER_PARTITION,
      fetchMinBytes: e.SECKILL_KAFKA_FETCH_MIN_BYTES,
      fetchMaxWaitMs: e.SECKILL_KAFKA_FETCH_MAX_WAIT_MS,
      createTopics: e.SECKILL_KAFKA_CREATE_TOPICS === 'true',
      partitions: e.SECKILL_KAFKA_PARTITIONS,
      replicationFactor: e.SECKILL_KAFKA_REPLICATION,
      minInsyncReplicas: e.SECKILL_KAFKA_MIN_INSYNC_REPLICAS,
      idempotent: e.SECKILL_KAFKA_IDEMPOTENT === 'true',
      namespace: e.SECKILL_KAFKA_NAMESPACE,
    },
    kafkaBrokers: e.SECKILL_KAFKA_BROKERS.split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    jwtSecret: e.SECKILL_JWT_SECRET ?? DEVELOPMENT_SECRET,
    usingDevelopmentSecret: !e.SECKILL_JWT_SECRET,
    tokenPolicy: tokenPolicyOf(e),
    httpServer: httpServerOf(e),
    logLevel: e.SECKILL_LOG_LEVEL,
    demoProduct: (e.SECKILL_DEMO_PRODUCT ?? (e.SECKILL_PROFILE === 'memory' ? 'true' : 'false')) === 'true',
    rateLimit: { points: e.SECKILL_RATE_LIMIT_POINTS, windowSeconds: e.SECKILL_RATE_LIMIT_WINDOW_SECONDS },
    admission: admissionOf(e),
    pathTokenTtlMs: e.SECKILL_PATH_TOKEN_TTL_MS,
    soldOutFlagTtlMs: e.SECKILL_SOLD_OUT_FLAG_TTL_MS,
    lockLeaseMs: e.SECKILL_LOCK_LEASE_MS,
    idempotencyKeyTtlMs: e.SECKILL_IDEMPOTENCY_KEY_TTL_MS,
    idempotencyKeysMax: e.SECKILL_IDEMPOTENCY_KEYS_MAX,
    productCacheMs: e.SECKILL_PRODUCT_CACHE_MS,
    paymentTimeoutMs: e.SECKILL_PAYMENT_TIMEOUT_MS,
    paymentScanMs: e.SECKILL_PAYMENT_SCAN_MS,
    orderEvents: {
      pollMs: e.SECKILL_ORDER_EVENTS_POLL_MS,
      maxMs: e.SECKILL_ORDER_EVENTS_MAX_MS,
      graceMs: e.SECKILL_ORDER_EVENTS_GRACE_MS,
      perBuyerMax: e.SECKILL_ORDER_EVENTS_PER_BUYER,
      processMax: e.SECKILL_ORDER_EVENTS_MAX,
      ticketTtlMs: e.SECKILL_ORDER_EVENTS_TICKET_TTL_MS,
    },
    outbox: {
      relayEveryMs: e.SECKILL_OUTBOX_RELAY_MS,
      pendingGraceMs: e.SECKILL_OUTBOX_PENDING_GRACE_MS,
      staleSentMs: e.SECKILL_OUTBOX_STALE_SENT_MS,
      backoffBaseMs: e.SECKILL_OUTBOX_BACKOFF_MS,
      maxAttempts: e.SECKILL_OUTBOX_MAX_ATTEMPTS,
    },
    reconcileCron: e.SECKILL_RECONCILE_CRON,
    reconcileSettleMs: e.SECKILL_RECONCILE_SETTLE_MS,
    auditStaleMs: e.SECKILL_AUDIT_STALE_MS,
    mergeDecrements: e.SECKILL_MERGE_DECREMENTS === 'true',
    groupCommit: {
      maxBatch: e.SECKILL_GROUP_COMMIT_MAX,
      maxWaitMs: e.SECKILL_GROUP_COMMIT_WAIT_MS,
      maxConcurrent: e.SECKILL_GROUP_COMMIT_CONCURRENCY,
    },
    publish: {
      maxBatch: e.SECKILL_PUBLISH_BATCH,
      maxInFlight: e.SECKILL_PUBLISH_CONCURRENCY,
      lingerMs: e.SECKILL_PUBLISH_LINGER_MS,
    },
    consumerBatchSize: e.SECKILL_CONSUMER_BATCH,
    metrics: {
      port: e.SECKILL_METRICS_PORT ?? e.SECKILL_WORKER_METRICS_PORT,
      host: e.SECKILL_METRICS_HOST,
      token: e.SECKILL_METRICS_TOKEN,
      sampleEveryMs: e.SECKILL_METRICS_SAMPLE_MS,
    },
    instanceBeatMs: e.SECKILL_INSTANCE_BEAT_MS,
  };
};
