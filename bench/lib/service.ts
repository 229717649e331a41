/**
 * The real service as the benchmarks run it: a child process on a database and a Redis namespace of its own,
 * its settings taken only from here, and the few HTTP calls the benchmarks make to it.
 */
import { Cluster } from 'ioredis';
import { connectRedis } from '../../src/adapters/redis/redis-connection.js';

export const REDIS_URL = process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Deletes every Redis key of a namespace (on each master of a cluster). */
export const dropNamespace = async (namespace: string): Promise<void> => {
  const redis = connectRedis({ url: REDIS_URL, commandTimeoutMs: 10_000 });
  try {
    const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 500);
        cursor = next;
        for (const key of keys) await redis.del(key);
      } while (cursor !== '0');
    }
  } finally {
    await redis.quit();
  }
};

const UNSPENDABLE = '100000000';

/**
 * Admission control as a deployment runs it, with budgets too large for one machine's load to spend: every
 * budget is asked on every request (the cost is paid), none refuses.
 */
export const ADMISSION_ON: Readonly<Record<string, string>> = {
  SECKILL_RATE_LIMIT_POINTS: UNSPENDABLE,
  SECKILL_ADDRESS_RATE_LIMIT_POINTS: UNSPENDABLE,
  SECKILL_WRITE_RATE_LIMIT_POINTS: UNSPENDABLE,
  SECKILL_READ_RATE_LIMIT_POINTS: UNSPENDABLE,
  SECKILL_ORDERS_IN_FLIGHT_MAX: '1024',
};

/** No admission control at all: every budget and the bound on orders in flight off. */
export const ADMISSION_OFF: Readonly<Record<string, string>> = {
  SECKILL_RATE_LIMIT_POINTS: '0',
  SECKILL_ADDRESS_RATE_LIMIT_POINTS: '0',
  SECKILL_WRITE_RATE_LIMIT_POINTS: '0',
  SECKILL_READ_RATE_LIMIT_POINTS: '0',
  SECKILL_ORDERS_IN_FLIGHT_MAX: '0',
};

/**
 * The service's environment: the caller's, minus every SECKILL_* it exported, plus the settings given here
 * (so a figure never depends on what the shell happened to export).
 */
export const serviceEnv = (
  settings: Readonly<{
    secret: string;
    mysqlUrl: string;
    namespace: string;
    brokers: string;
    /** the admission settings (budgets, the bound on orders in flight) */
    admission: Readonly<Record<string, string>>;
    extra?: Readonly<Record<string, string>>;
  }>,
): NodeJS.ProcessEnv => {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SECKILL_')),
  );
  return {
    ...inherited,
    SECKILL_PROFILE: 'real',
    SECKILL_JWT_SECRET: settings.secret,
    SECKILL_MYSQL_URL: settings.mysqlUrl,
    SECKILL_REDIS_URL: REDIS_URL,
    SECKILL_REDIS_NAMESPACE: settings.namespace,
    SECKILL_KAFKA_BROKERS: settings.brokers,
    SECKILL_HOST: '127.0.0.1',
    SECKILL_LOG_LEVEL: 'warn',
    ...settings.admission,
    SECKILL_DEMO_PRODUCT: 'false',
    ...settings.extra,
  };
};

export type Answer = Readonly<{ status: number; body: unknown }>;

/** One JSON call with a bearer token: GET without a body, POST with one. */
export const call = async (url: string, token: string, body?: unknown): Promise<Answer> => {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
};

/** Lists a product (one unit per order) and answers its id; a gate that did not load is an error. */
export const listProduct = async (
  base: string,
  admin: string,
  name: string,
  stock: number,
  perUserLimit: number,
): Promise<number> => {
  const answer = await call(`${base}/api/v1/admin/products`, admin, {
    name,
    stock,
    perUserLimit,
    maxPerOrder: 1,
  });
  const product = answer.body as { productId?: number; gate?: string } | null;
  if (answer.status !== 201 || typeof product?.productId !== 'number' || product.gate === 'NOT_LOADED')
    throw new Error(`listing ${name} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return product.productId;
};

export type AuditReport = {
  ok: boolean;
  products: Array<{ listed: number; added: number; sold: number; undecided: number }>;
  violations: Array<{ kind: string; detail: string }>;
};

/** One sample of a Prometheus text exposition: the sum over every series of `name` whose labels include `match`. */
export const metricSum = (text: string, name: string, match = ''): number =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => line.includes(match))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

export type Batching = Readonly<{
  /** reservations per group-commit transaction */
  reservationsPerTransaction: number;
  /** messages per batch the commit consumer handled (and merged) */
  messagesPerConsumerBatch: number;
  reservationTransactions: number;
  consumerBatches: number;
}>;

/** Scrapes one metrics listener (SECKILL_METRICS_PORT: on loopback, no credential). */
export const scrape = async (metricsBase: string): Promise<string> => {
  const response = await fetch(`${metricsBase}/metrics`);
  if (response.status !== 200) throw new Error(`${metricsBase}/metrics answered ${response.status}`);
  return response.text();
};

/**
 * How much the running service batched, from the /metrics counters of its API and its worker, scraped on their
 * metrics ports (SECKILL_METRICS_PORT): the API port keeps /metrics closed without SECKILL_METRICS_TOKEN.
 */
export const batchingOf = async (apiMetrics: string, workerMetrics = apiMetrics): Promise<Batching> => {
  const api = await scrape(apiMetrics);
  const worker = workerMetrics === apiMetrics ? api : await scrape(workerMetrics);
  const reservations = metricSum(api, 'seckill_reservations_recorded_total');
  const transactions = metricSum(api, 'seckill_reservation_batches_total');
  const messages = metricSum(worker, 'seckill_consumer_messages_total', 'group="seckill-commit"');
  const batches = metricSum(worker, 'seckill_consumer_batches_total', 'group="seckill-commit"');
  const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 10) / 10;
  return {
    reservationsPerTransaction: ratio(reservations, transactions),
    messagesPerConsumerBatch: ratio(messages, batches),
    reservationTransactions: transactions,
    consumerBatches: batches,
  };
};

/** What one process holds, in MB: resident memory, and the V8 heap's used and total. */
export type Memory = Readonly<{ rssMb: number; heapUsedMb: number; heapTotalMb: number }>;

const MB = 1024 * 1024;

/** A process's memory, read from its metrics listener (the process collector's gauges). */
export const memoryOf = async (metricsBase: string): Promise<Memory> => {
  const text = await scrape(metricsBase);
  const mb = (name: string) => Math.round(metricSum(text, name) / MB);
  return {
    rssMb: mb('seckill_process_resident_memory_bytes'),
    heapUsedMb: mb('seckill_nodejs_heap_size_used_bytes'),
    heapTotalMb: mb('seckill_nodejs_heap_size_total_bytes'),
  };
};
