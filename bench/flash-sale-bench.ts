/**
 * `npm run bench`: the flash sale end to end on the real profile, next to its baselines, in one run on this
 * machine. It starts what it needs (a 3-broker Apache Kafka cluster, the service on a fresh database and Redis namespace
 * — `seckill serve` taking the orders and `seckill worker` committing them, as a sale is deployed, or with
 * BENCH_DEPLOYMENT=all both in one process — and two baseline servers), drives each with autocannon, bursts payments and
 * cancellations at the service, measures MariaDB's hot-row ceiling and the commit consumer with and without
 * merged decrements, checks that nothing was oversold, prints every figure next to its target, writes
 * bench/results/latest.json, the results block of docs/benchmarks.md and docs/benchmarks.svg, and cleans up
 * (children, databases, Redis keys).
 *
 * Knobs: BENCH_SECONDS (8, per measured load), BENCH_CONNECTIONS ("50,256"), BENCH_BACKLOG (20000),
 * BENCH_BATCH (500), BENCH_BURST (500 orders), BENCH_DEPLOYMENT (split | all; all writes
 * bench/results/latest-all.json only), BENCH_SERVICE_ENV (service settings to try, JSON; writes
 * bench/results/latest-tried.json only), BENCH_KAFKA (kafka | mock: librdkafka's mock cluster, for an A/B;
 * writes bench/results/latest-mock.json only), BENCH_KAFKA_BROKERS (3 | 1: one node, replication 1; writes
 * bench/results/latest-one-broker.json only), BENCH_MYSQL_URL (mysql://root@127.0.0.1:3306),
 * SECKILL_REDIS_URL, BENCH_SCALEOUT_ROUNDS (3), BENCH_PHASES ("main,scaleout": `main` is everything but the
 * scale-out phase; `scaleout` alone runs only that phase and writes bench/results/latest-scaleout.json only).
 *
 * The scale-out phase (last): the service deployed as scripts/cluster/deployment.ts deploys it (a Redis Cluster,
 * two workers, HAProxy in front of the APIs) on the bench's Kafka cluster, once with one API replica and once
 * with two on the machine's MariaDB, and once with two on a Galera cluster of 3, side by side; the flood and the
 * accept load through the balancer, alternated.
 */
import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Connection, createConnection, type RowDataPacket } from 'mysql2/promise';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import { connectRedis } from '../src/adapters/redis/redis-connection.js';
import { SERVICE_NODE_FLAGS } from '../src/infrastructure/node-flags.js';
import { writeChart } from './chart.js';
import { type BenchBroker, startBenchBroker } from './lib/broker.js';
import { drive, type LoadResult, perSecond } from './lib/cannon.js';
import { cpuBetween, type CpuUse, othersBetween, type Others, type Probe, snapshot } from './lib/cpu.js';
import type { Deployment } from '../scripts/cluster/deployment.js';
import { GaleraCluster } from '../scripts/cluster/galera-cluster.js';
import { consumerRun, type ConsumerOptions } from './lib/consumer-bench.js';
import { jwtCost } from './lib/jwt-cost.js';
import {
  count,
  createDatabase,
  createNaiveProducts,
  databaseUrl,
  dropDatabase,
  hotRowCeiling,
  openAdmin,
} from './lib/mysql.js';
import {
  answers200,
  type Child,
  freePort,
  type LogSummary,
  portAnnounced,
  runNode,
  startNode,
} from './lib/processes.js';
import {
  type CommitBacklog,
  type Earlier,
  type Figures,
  type Latency,
  type MemoryFigures,
  type Phase,
  type Ratios,
  ratiosOf,
  renderScaleOutRun,
  renderText,
  type ScaleOutRun,
  type ServiceMemory,
  targetsOf,
  updateDoc,
} from './lib/report.js';
import {
  deploymentProbes,
  deploymentSettings,
  median,
  noSamples,
  type ScaleOutResult,
  scaleOutBlocker,
  type ScaleOutSide,
  type ScaleOutSamples,
  sideOf,
  startDeployment,
} from './lib/scale-out.js';
import { type BurstResult, payOrCancel, placeOrders } from './lib/burst.js';
import {
  ADMISSION_OFF,
  ADMISSION_ON,
  type AuditReport,
  type Batching,
  batchingOf,
  call,
  dropNamespace,
  listProduct,
  memoryOf,
  REDIS_URL,
  serviceEnv,
} from './lib/service.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SECONDS = Number(env('BENCH_SECONDS', '8'));
const WARMUP_SECONDS = 2;
const CONNECTIONS = env('BENCH_CONNECTIONS', '50,256').split(',').map(Number);
const HEADLINE = Math.max(...CONNECTIONS);
const BUYERS = 10_000;
const FLOOD_STOCK = 100;
const ACCEPT_STOCK = 400_000;
/** the API caps perUserLimit at 10,000 (ListProductBody); with 10,000 buyers no one comes near it */
const PER_USER_LIMIT = 10_000;
const NAIVE_STOCK = 50_000_000;
const HOT_ROW = { connections: 32, seconds: 5 } as const;
const CONSUMER: ConsumerOptions = {
  orders: Number(env('BENCH_BACKLOG', '20000')),
  products: 4,
  batch: Number(env('BENCH_BATCH', '500')),
  concurrency: 2,
};
const DRAIN_TIMEOUT_MS = 150_000;
/** how long orders are reserved with the worker paused, to give its commit consumer a backlog to time */
const BACKLOG_SECONDS = Number(env('BENCH_BACKLOG_SECONDS', '5'));
/** `all`: the service as one process (`npm start`); `split`: `seckill serve` and `seckill worker` */
const DEPLOYMENT = env('BENCH_DEPLOYMENT', 'split') === 'all' ? 'all' : 'split';
const SPLIT = DEPLOYMENT === 'split';
/** settings of the service to try (SECKILL_* as JSON); a run with any writes bench/results/latest-tried.json */
const TRIED = JSON.parse(env('BENCH_SERVICE_ENV', '{}')) as Record<string, string>;
const TRYING = Object.keys(TRIED).length > 0;
/** `mock`: librdkafka's mock cluster instead of Apache Kafka, for an A/B on the same machine; writes latest-mock.json only */
const MOCK_KAFKA = env('BENCH_KAFKA', 'kafka') === 'mock';
/** Apache Kafka nodes of the bench's cluster: 3 (replication 3, min.insync 2, as deployed) or 1 */
const KAFKA_BROKERS = Number(env('BENCH_KAFKA_BROKERS', '3'));
if (KAFKA_BROKERS !== 1 && KAFKA_BROKERS !== 3) throw new Error('BENCH_KAFKA_BROKERS: 1 or 3');
/** the pay/cancel burst: this many committed orders, paid or cancelled this many at a time */
const BURST = { orders: Number(env('BENCH_BURST', '500')), concurrency: 100 } as const;
const SECRET = `bench-${randomUUID()}-${randomUUID()}`;
/** the parts of the run: `main` (every phase but the scale-out) and `scaleout` */
const PHASES = new Set(
  env('BENCH_PHASES', 'main,scaleout')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
);
for (const phase of PHASES)
  if (phase !== 'main' && phase !== 'scaleout')
    throw new Error(`BENCH_PHASES: unknown phase "${phase}" (main, scaleout)`);
if (PHASES.size === 0) throw new Error('BENCH_PHASES names no phase (main, scaleout)');

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/infrastructure/main.js', import.meta.url));
const BARE = fileURLToPath(new URL('./baselines/bare-express.js', import.meta.url));
const NAIVE = fileURLToPath(new URL('./baselines/naive-db.js', import.meta.url));

const started = Date.now();
const say = (line: string) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---- cleanup: last registered, first run; every step runs even if another failed ----

const cleanups: Array<Readonly<{ what: string; run: () => Promise<void> }>> = [];
const onCleanup = (what: string, run: () => Promise<void>) => cleanups.unshift({ what, run });
const cleanUp = async () => {
  for (const step of cleanups.splice(0)) {
    try {
      await step.run();
    } catch (error) {
      say(`cleanup "${step.what}" failed: ${String(error)}`);
    }
  }
};

const latencyOf = (r: LoadResult): Latency => ({ p50Ms: r.p50Ms, p99Ms: r.p99Ms, maxMs: r.maxMs });

const statusesOf = (r: LoadResult) => ({ ...r.statuses, errors: r.errors, timeouts: r.timeouts });
const byConnections = <T>(results: Readonly<Record<string, LoadResult>>, pick: (r: LoadResult) => T) =>
  Object.fromEntries(Object.entries(results).map(([c, r]) => [c, pick(r)])) as Record<string, T>;

/** A figure per phase and connection count; `key` names the load in the CPU figures. */
const byPhase = <T>(
  loads: Readonly<Record<Phase, Readonly<Record<string, LoadResult>>>>,
  pick: (r: LoadResult, key: string) => T,
) =>
  Object.fromEntries(
    Object.entries(loads).map(([phase, results]) => [
      phase,
      Object.fromEntries(Object.entries(results).map(([c, r]) => [c, pick(r, `${phase} @${c}`)])),
    ]),
  ) as Record<Phase, Record<string, T>>;

/** Mean cores that processes outside the run used during the HTTP loads. */
const otherCoresMean = () => {
  const http = Object.entries(cpuUse).filter(([key]) => key.includes(' @'));
  const sum = http.reduce((n, [, use]) => n + (use['other'] ?? 0), 0);
  return Number((sum / Math.max(1, http.length)).toFixed(2));
};

const describe = (r: LoadResult) =>
  `${r.connections} conn.: ${r.rps.toLocaleString('en')} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${JSON.stringify(statusesOf(r))}`;

// ---- CPU: which process used the two cores during each measured load ----

/** the processes every load involves (filled in once their ids are known); the target is added per load */
const sharedProbes: Probe[] = [{ name: 'bench', pid: process.pid }];
const cpuUse: Record<string, CpuUse> = {};
const cpuOthers: Record<string, Others> = {};

/** Adds a probe for as long as a process lives (the service's worker); answers the function that removes it. */
const probeWhileAlive = (probe: Probe): (() => void) => {
  sharedProbes.push(probe);
  return () => {
    const at = sharedProbes.indexOf(probe);
    if (at >= 0) sharedProbes.splice(at, 1);
  };
};

/** Runs `work` and records the cores each process used meanwhile under `key` (`extra`: more processes to probe). */
const withCpu = async <T>(
  key: string,
  targetPid: number | undefined,
  work: () => Promise<T>,
  extra: readonly Probe[] = [],
): Promise<T> => {
  const probes = [...sharedProbes, { name: 'target', pid: targetPid }, ...extra];
  const before = await snapshot(probes);
  const result = await work();
  const after = await snapshot(probes);
  cpuUse[key] = cpuBetween(before, after);
  cpuOthers[key] = await othersBetween(before, after, probes);
  return result;
};

type Target = Readonly<{
  key: string;
  url: string;
  productId: number;
  tokens: readonly string[];
  pid?: number;
  /** a fresh Idempotency-Key on every request */
  keyed?: boolean;
  /** runs after each measured load of this target (the service's memory is sampled there) */
  after?: () => Promise<void>;
}>;

/**
 * A warm-up run (not kept), then one measured run per connection count; `around` is told when each
 * measured run starts and answers what to do once it has ended.
 */
const measure = async (
  label: string,
  target: Target,
  warmUp = true,
  around?: Around,
  counts: readonly number[] = CONNECTIONS,
): Promise<Record<string, LoadResult>> => {
  if (warmUp) await drive({ ...target, connections: CONNECTIONS[0] ?? 50, seconds: WARMUP_SECONDS });
  const results: Record<string, LoadResult> = {};
  for (const connections of counts) {
    const ended = await around?.(connections);
    const result = await withCpu(`${target.key} @${connections}`, target.pid, () =>
      drive({ ...target, connections, seconds: SECONDS }),
    );
    await ended?.(result);
    await target.after?.();
    results[connections] = result;
    say(`${label} ${describe(result)}; cores ${JSON.stringify(cpuUse[`${target.key} @${connections}`])}`);
  }
  return results;
};

/** What to do as a measured load starts; it answers what to do once the load has ended. */
type Around = (connections: number) => Promise<(result: LoadResult) => Promise<void>>;

/** A load of the alternated rounds: a target, how its answers count, and what to do around each round. */
type RoundLoad = Readonly<{ label: string; target: Target; accepted?: boolean; around?: Around }>;

const ROUNDS = Number(env('BENCH_ROUNDS', '3'));

/**
 * The loads at the headline connection count, in alternated rounds: each round runs every load once, the order
 * rotating from round to round, so that the machine's drift over a run (bare express's own pace moved by a
 * quarter within one run here) falls on every load alike. Each load's round with the median answers per second
 * stands for it, its latency and CPU too; every round's figure is kept.
 */
const alternated = async (
  loads: readonly RoundLoad[],
): Promise<Readonly<{ results: Record<string, LoadResult>; rounds: Record<string, number[]> }>> => {
  const runs: Record<
    string,
    Array<{ result: LoadResult; cpu: CpuUse; others: Others; ended?: () => Promise<void> }>
  > = {};
  const perSecondOf = (load: RoundLoad, r: LoadResult) => (load.accepted ? perSecond(r, 202) : r.rps);
  for (let round = 0; round < ROUNDS; round += 1)
    for (let i = 0; i < loads.length; i += 1) {
      const load = loads[(i + round) % loads.length]!;
      const { key } = load.target;
      const ended = await load.around?.(HEADLINE);
      const roundKey = `${key} @${HEADLINE} round ${round + 1}`;
      const result = await withCpu(roundKey, load.target.pid, () =>
        drive({ ...load.target, connections: HEADLINE, seconds: SECONDS }),
      );
      await load.target.after?.();
      (runs[key] ??= []).push({
        result,
        cpu: cpuUse[roundKey] ?? {},
        others: cpuOthers[roundKey] ?? [],
        ...(ended ? { ended: () => ended(result) } : {}),
      });
      say(
        `${load.label}, round ${round + 1}: ${describe(result)}; cores ${JSON.stringify(cpuUse[roundKey])}`,
      );
    }
  const results: Record<string, LoadResult> = {};
  const rounds: Record<string, number[]> = {};
  for (const load of loads) {
    const { key } = load.target;
    const list = runs[key] ?? [];
    rounds[key] = list.map((r) => perSecondOf(load, r.result));
    const chosen = [...list].sort((a, b) => perSecondOf(load, a.result) - perSecondOf(load, b.result))[
      Math.floor(list.length / 2)
    ]!;
    results[key] = chosen.result;
    cpuUse[`${key} @${HEADLINE}`] = chosen.cpu;
    cpuOthers[`${key} @${HEADLINE}`] = chosen.others;
    await chosen.ended?.();
  }
  return { results, rounds };
};

// ---- phases ----

type Run = Readonly<{ id: string; admin: Connection; tokens: readonly string[]; adminToken: string }>;

type Baseline = Readonly<{ key: string; label: string; script: string; env: NodeJS.ProcessEnv }>;

const baseline = async (
  { key, label, script, env: extraEnv }: Baseline,
  run: Run,
  productId: number,
): Promise<Record<string, LoadResult>> => {
  const child = startNode(label, script, [], { ...process.env, ...extraEnv, PORT: '0' });
  onCleanup(`stop ${label}`, child.stop);
  const port = await portAnnounced(child);
  say(`${label} listening on ${port}`);
  try {
    const url = `http://127.0.0.1:${port}`;
    return await measure(label, { key, url, productId, tokens: run.tokens, pid: child.process.pid });
  } finally {
    await child.stop();
  }
};

/** Bare express, kept running: measured at the other connection counts now, at the headline one in the rounds. */
const bareExpress = async (run: Run) => {
  const child = startNode('bare express', BARE, [], { ...process.env, PORT: '0' });
  onCleanup('stop bare express', child.stop);
  const port = await portAnnounced(child);
  say(`bare express listening on ${port}`);
  const target: Target = {
    key: 'bareExpress',
    url: `http://127.0.0.1:${port}`,
    productId: 1,
    tokens: run.tokens,
    pid: child.process.pid,
  };
  const others = CONNECTIONS.filter((c) => c !== HEADLINE);
  const results = await measure('bare express', target, true, undefined, others);
  return { target, results, stop: child.stop };
};

type RealPhase = Readonly<{
  flood: Record<string, LoadResult>;
  accept: Record<string, LoadResult>;
  keyedFlood: Record<string, LoadResult>;
  keyedAccept: Record<string, LoadResult>;
  /** answers per second of each load in each alternated round at the headline count (bare express's too) */
  rounds: Record<string, number[]>;
  accepted: number;
  /** orders the worker decided while each accept load ran, per second */
  commitDuringAcceptPerSec: Record<string, number>;
  drained: boolean;
  drainSeconds: number;
  backlogAfterAccept: number;
  serviceCommitPerSec: number;
  commitBacklog: CommitBacklog;
  serviceLog: LogSummary;
  batching: Batching;
  burst: BurstResult;
  memory: MemoryFigures;
  oversold: number;
  auditOk: boolean;
  auditViolations: string[];
}>;

/** Sells the small stock out, so that the flood meets the in-process sold-out flag. */
const sellOut = async (base: string, productId: number, run: Run) => {
  const result = await drive({
    url: base,
    connections: CONNECTIONS[0] ?? 50,
    tokens: run.tokens,
    productId,
    amount: FLOOD_STOCK * 30,
  });
  const product = await call(`${base}/api/v1/products/${productId}`, run.adminToken);
  const stockLeft = (product.body as { stockLeft?: number } | null)?.stockLeft;
  if (result.statuses['202'] !== FLOOD_STOCK || stockLeft !== 0)
    throw new Error(`sell-out: ${JSON.stringify(statusesOf(result))}, stock left ${stockLeft}`);
  say(`sell-out: ${FLOOD_STOCK} sold, ${describe(result)}`);
  return result;
};

const undecidedRows = (admin: Connection, db: string) =>
  count(admin, `SELECT COUNT(*) FROM \`${db}\`.orders WHERE status = 'RESERVED'`);

/** Orders the workers have decided (committed or released) on a product. */
const decidedRows = (admin: Connection, db: string, productId: number) =>
  count(admin, `SELECT COUNT(*) FROM \`${db}\`.orders WHERE status <> 'RESERVED' AND product_id = ?`, [
    productId,
  ]);

/** Waits until MySQL has decided every reservation, then until the audit sees none undecided. */
const drain = async (base: string, run: Run, db: string, admin: Connection = run.admin) => {
  const from = Date.now();
  const deadline = from + DRAIN_TIMEOUT_MS;
  const backlog = await undecidedRows(admin, db);
  let reserved = backlog;
  while (reserved > 0 && Date.now() < deadline) {
    await sleep(100);
    reserved = await undecidedRows(admin, db);
  }
  // the worker's commit consumer on the backlog of one product (one partition), nothing else running
  const mysqlSeconds = (Date.now() - from) / 1000;
  let audit: AuditReport;
  for (;;) {
    const answer = await call(`${base}/api/v1/admin/audit`, run.adminToken);
    if (answer.status !== 200)
      throw new Error(`audit answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    audit = answer.body as AuditReport;
    const undecided = audit.products.reduce((n, p) => n + p.undecided, 0);
    if ((undecided === 0 && audit.ok) || Date.now() >= deadline) break;
    await sleep(1_000);
  }
  const undecided = audit.products.reduce((n, p) => n + p.undecided, 0);
  return {
    drained: undecided === 0 && reserved === 0,
    drainSeconds: Math.round(mysqlSeconds * 10) / 10,
    backlogAfterAccept: backlog,
    serviceCommitPerSec: Math.round((backlog - reserved) / Math.max(0.001, mysqlSeconds)),
    oversold: audit.products.reduce((n, p) => n + Math.max(0, p.sold - p.listed - p.added), 0),
    auditOk: audit.ok,
    auditViolations: audit.violations.slice(0, 10).map((v) => `${v.kind}: ${v.detail}`),
  };
};

type Service = Readonly<{
  api: Child;
  /** the worker's own process, when the API and the worker run apart */
  worker: Child | null;
  base: string;
  /** the metrics ports (SECKILL_METRICS_PORT) of the API's process and of the worker's (the same in one process) */
  apiMetrics: string;
  workerMetrics: string;
  stop: () => Promise<void>;
}>;

/**
 * Starts the service: `seckill serve` and `seckill worker` as two processes, or with BENCH_DEPLOYMENT=all
 * `seckill all` (API and worker in one process, what `npm start` runs). It answers /readyz.
 */
const startService = async (env: NodeJS.ProcessEnv): Promise<Service> => {
  const apiPort = await freePort();
  const apiMetricsPort = await freePort();
  const api: Child = startNode(
    SPLIT ? 'seckill serve' : 'seckill all',
    MAIN,
    [SPLIT ? 'serve' : 'all'],
    { ...env, PORT: String(apiPort), SECKILL_METRICS_PORT: String(apiMetricsPort) },
    { nodeArgs: SERVICE_NODE_FLAGS },
  );
  onCleanup('stop the service', api.stop);
  const base = `http://127.0.0.1:${apiPort}`;
  const apiMetrics = `http://127.0.0.1:${apiMetricsPort}`;
  if (!SPLIT) {
    await answers200(api, `${base}/readyz`);
    return { api, worker: null, base, apiMetrics, workerMetrics: apiMetrics, stop: api.stop };
  }
  const workerMetricsPort = await freePort();
  const worker: Child = startNode(
    'seckill worker',
    MAIN,
    ['worker'],
    { ...env, SECKILL_METRICS_PORT: String(workerMetricsPort) },
    { nodeArgs: SERVICE_NODE_FLAGS },
  );
  onCleanup('stop the worker', worker.stop);
  const workerMetrics = `http://127.0.0.1:${workerMetricsPort}`;
  await answers200(api, `${base}/readyz`);
  await answers200(worker, `${workerMetrics}/readyz`);
  const stop = async () => {
    await Promise.all([api.stop(), worker.stop()]);
  };
  return { api, worker, base, apiMetrics, workerMetrics, stop };
};

/** How long after the last load the service's memory is sampled again (V8 gives memory back once it idles). */
const MEMORY_AFTER_MS = 30_000;

/** The service's memory: its API process's, and its worker's when that runs apart. */
const serviceMemory = async (service: Service): Promise<ServiceMemory> => ({
  api: await memoryOf(service.apiMetrics),
  worker: service.worker ? await memoryOf(service.workerMetrics) : null,
});

const showMemory = ({ api, worker }: ServiceMemory): string =>
  [
    `API ${api.rssMb} MB resident, heap ${api.heapUsedMb} of ${api.heapTotalMb} MB`,
    ...(worker
      ? [`worker ${worker.rssMb} MB resident, heap ${worker.heapUsedMb} of ${worker.heapTotalMb} MB`]
      : []),
  ].join('; ');

/** The pay/cancel burst on orders of a product of its own, once MySQL has committed them. */
const burstPhase = async (base: string, run: Run, db: string, pid?: number): Promise<BurstResult> => {
  const productId = await listProduct(base, run.adminToken, 'bench burst', BURST.orders, 1);
  // buyers the accept phase never saw, so each holds exactly one order of this product
  const signer = new JwtTokens(SECRET);
  const tokens = await Promise.all(
    Array.from({ length: BURST.orders }, (_, i) =>
      signer.sign({ userId: `burst-${run.id}-${i}`, role: 'user' }, 3600),
    ),
  );
  const orders = await placeOrders(base, productId, tokens, 50);
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  const undecidedBurst = () =>
    count(run.admin, `SELECT COUNT(*) FROM \`${db}\`.orders WHERE status = 'RESERVED' AND product_id = ?`, [
      productId,
    ]);
  while ((await undecidedBurst()) > 0 && Date.now() < deadline) await sleep(100);
  const result = await withCpu('pay/cancel burst', pid, () => payOrCancel(base, orders, BURST.concurrency));
  say(`pay/cancel burst: ${JSON.stringify(result)}; cores ${JSON.stringify(cpuUse['pay/cancel burst'])}`);
  return result;
};

/**
 * A service of its own: a fresh database and Redis namespace (dropped at cleanup) and, with a suffix, topics and
 * consumer groups of its own, migrated, then started with the given admission settings.
 */
const freshService = async (
  run: Run,
  kafka: BenchBroker,
  suffix: string,
  admission: Readonly<Record<string, string>>,
): Promise<Readonly<{ service: Service; db: string; namespace: string }>> => {
  const db = `seckill_bench_${run.id}${suffix ? `_${suffix}` : ''}`;
  const namespace = `bench-${run.id}${suffix ? `-${suffix}` : ''}:`;
  onCleanup(`drop database ${db}`, () => dropDatabase(run.admin, db));
  onCleanup(`delete Redis keys ${namespace}*`, () => dropNamespace(namespace));
  const environment = serviceEnv({
    secret: SECRET,
    mysqlUrl: databaseUrl(db),
    namespace,
    brokers: kafka.brokers,
    admission,
    // services that run side by side must not share consumer groups: each commits its own database's orders
    extra: {
      ...kafka.env,
      ...(suffix ? { SECKILL_KAFKA_NAMESPACE: `bench-${run.id}-${suffix}` } : {}),
      ...TRIED,
    },
  });
  say(`migrate: ${(await runNode(MAIN, ['migrate'], environment)).trim()}`);
  return { service: await startService(environment), db, namespace };
};

const realService = async (
  run: Run,
  kafka: BenchBroker,
  bare: Awaited<ReturnType<typeof bareExpress>>,
): Promise<RealPhase> => {
  const { service, db, namespace } = await freshService(run, kafka, '', ADMISSION_ON);
  const { base } = service;
  const unprobe = probeWhileAlive({ name: 'worker', pid: service.worker?.process.pid });
  say(`service ready on ${base} (${DEPLOYMENT}; database ${db}, namespace ${namespace})`);
  try {
    const floodId = await listProduct(base, run.adminToken, 'bench flood', FLOOD_STOCK, 1);
    const acceptId = await listProduct(base, run.adminToken, 'bench accept', ACCEPT_STOCK, PER_USER_LIMIT);
    await sellOut(base, floodId, run);
    // the worker has joined its groups and commits: the 100 sold are decided
    while ((await undecidedRows(run.admin, db)) > 0) await sleep(100);
    const idle = await serviceMemory(service);
    say(`memory at idle: ${showMemory(idle)}`);
    const endOf: Record<string, ServiceMemory> = {};
    const sampled = (key: string) => async () => {
      endOf[key] = await serviceMemory(service);
    };
    const pid = service.api.process.pid;
    const commitDuringAcceptPerSec: Record<string, number> = {};
    const duringAccept: Around = async (connections) => {
      const before = await undecidedRows(run.admin, db);
      return async (result) => {
        const grown = (await undecidedRows(run.admin, db)) - before;
        const decided = (result.statuses['202'] ?? 0) - grown;
        commitDuringAcceptPerSec[connections] = Math.round(decided / result.seconds);
        say(`  …the worker decided ${decided.toLocaleString('en')} meanwhile; ${grown} more undecided`);
      };
    };
    const loads: RoundLoad[] = [
      { label: 'bare express', target: bare.target },
      {
        label: 'flood (sold out)',
        target: {
          key: 'flood',
          url: base,
          productId: floodId,
          tokens: run.tokens,
          pid,
          after: sampled('flood'),
        },
      },
      {
        label: 'keyed flood (sold out, a fresh Idempotency-Key per request)',
        target: {
          key: 'keyedFlood',
          url: base,
          productId: floodId,
          tokens: run.tokens,
          pid,
          keyed: true,
          after: sampled('keyedFlood'),
        },
      },
      {
        label: 'accept',
        target: {
          key: 'accept',
          url: base,
          productId: acceptId,
          tokens: run.tokens,
          pid,
          after: sampled('accept'),
        },
        accepted: true,
        around: duringAccept,
      },
      {
        label: 'keyed accept (a fresh Idempotency-Key per request)',
        target: {
          key: 'keyedAccept',
          url: base,
          productId: acceptId,
          tokens: run.tokens,
          pid,
          keyed: true,
          after: sampled('keyedAccept'),
        },
        accepted: true,
      },
    ];
    // the other connection counts once each, then the headline count in alternated rounds with bare express
    const others = CONNECTIONS.filter((c) => c !== HEADLINE);
    const single: Record<string, Record<string, LoadResult>> = {};
    for (const load of loads.slice(1))
      single[load.target.key] = await measure(load.label, load.target, false, load.around, others);
    const { results: headline, rounds } = await alternated(loads);
    const merged = (key: string): Record<string, LoadResult> => ({
      ...single[key],
      [HEADLINE]: headline[key]!,
    });
    bare.results[HEADLINE] = headline['bareExpress']!;
    await bare.stop();
    const [flood, keyedFlood, accept, keyedAccept] = [
      merged('flood'),
      merged('keyedFlood'),
      merged('accept'),
      merged('keyedAccept'),
    ];
    const accepted =
      FLOOD_STOCK +
      [...Object.values(accept), ...Object.values(keyedAccept)].reduce(
        (n, r) => n + (r.statuses['202'] ?? 0),
        0,
      );
    say(`waiting for the pipeline to decide ${accepted.toLocaleString('en')} reservations…`);
    const drained = await drain(base, run, db);
    say(`drained: ${JSON.stringify(drained)}`);
    const backlog = service.worker?.process.pid
      ? await backlogPhase(base, run, db, {
          productId: acceptId,
          workerPid: service.worker.process.pid,
        })
      : null;
    const batching = await batchingOf(service.apiMetrics, service.workerMetrics);
    say(`batching: ${JSON.stringify(batching)}`);
    const burst = await burstPhase(base, run, db, pid);
    await sampled('burst')();
    for (const [load, sample] of Object.entries(endOf))
      say(`memory at the end of ${load}: ${showMemory(sample)}`);
    // before the closing audit, so that the sample is what the loads left (the drains' audits ran before the
    // burst; their replays run in threads of their own)
    await sleep(MEMORY_AFTER_MS);
    const after = await serviceMemory(service);
    say(`memory ${MEMORY_AFTER_MS / 1000} s after the last load: ${showMemory(after)}`);
    const afterBurst = await drain(base, run, db);
    const serviceLog = service.worker
      ? mergeLogs(service.api.logs(), service.worker.logs())
      : service.api.logs();
    say(`service log (warn and above): ${JSON.stringify(serviceLog)}`);
    return {
      flood,
      accept,
      keyedFlood,
      keyedAccept,
      rounds,
      accepted: accepted + (backlog?.reserved ?? 0),
      commitDuringAcceptPerSec,
      ...drained,
      ...commitFigures(drained, backlog),
      ...booksAfter([drained, backlog?.drained, afterBurst]),
      serviceLog,
      batching,
      burst,
      memory: { idle, endOf, after, afterSeconds: MEMORY_AFTER_MS / 1000 },
    };
  } finally {
    unprobe();
    await service.stop();
  }
};

/** How many times the A/B below alternates its two services at each connection count. */
const ADMISSION_ROUNDS = Number(env('BENCH_ADMISSION_ROUNDS', '4'));

type AdmissionAB = Readonly<{
  /** flood req/s of each round, per connection count */
  on: Record<string, number[]>;
  off: Record<string, number[]>;
  /** accepted orders per second of each round, at the headline connection count */
  acceptOn: number[];
  acceptOff: number[];
  /** the service's CPU µs per accepted order of each round (its API and its worker) */
  acceptCpuOn: number[];
  acceptCpuOff: number[];
}>;

/**
 * What admission control costs: two fresh services side by side, one with every budget and the bound on orders
 * in flight on (at sizes one machine cannot spend, so each is asked and none refuses), one with all of them
 * off. Their loads alternate, ON then OFF, ADMISSION_ROUNDS times, so that both meet the same machine (the
 * run-to-run spread here is larger than the figure sought): the sold-out flood at each connection count, where
 * only the bound on orders in flight is met (the sold-out flag answers before any budget), and the accept load
 * at the headline count, where the address and buyer budgets add their Redis calls.
 */
type AbSide = Readonly<{
  side: 'on' | 'off';
  url: string;
  floodId: number;
  acceptId: number;
  pid: number | undefined;
  workerPid: number | undefined;
}>;

/** One side of the A/B: its flood product sold out and decided, its accept product listed. */
const prepareSide = async (
  run: Run,
  side: AbSide['side'],
  { service, db }: Awaited<ReturnType<typeof freshService>>,
): Promise<AbSide> => {
  const floodId = await listProduct(service.base, run.adminToken, 'bench flood A/B', FLOOD_STOCK, 1);
  const acceptId = await listProduct(
    service.base,
    run.adminToken,
    'bench accept A/B',
    ACCEPT_STOCK,
    PER_USER_LIMIT,
  );
  await sellOut(service.base, floodId, run);
  while ((await undecidedRows(run.admin, db)) > 0) await sleep(100);
  return {
    side,
    url: service.base,
    floodId,
    acceptId,
    pid: service.api.process.pid,
    workerPid: service.worker?.process.pid,
  };
};

/** One round of the A/B: the flood at each connection count, then the accept load, each side in turn. */
const abRound = async (
  run: Run,
  round: number,
  inTurn: readonly AbSide[],
  ab: AdmissionAB,
): Promise<void> => {
  for (const connections of CONNECTIONS)
    for (const target of inTurn) {
      const result = await withCpu(`admission ${target.side} @${connections}`, target.pid, () =>
        drive({
          url: target.url,
          productId: target.floodId,
          tokens: run.tokens,
          connections,
          seconds: SECONDS,
        }),
      );
      (ab[target.side][connections] ??= []).push(result.rps);
      say(`admission ${target.side}, flood, round ${round}: ${describe(result)}`);
    }
  for (const target of inTurn) {
    const key = `admission accept ${target.side}`;
    const unprobe = probeWhileAlive({ name: 'worker', pid: target.workerPid });
    const result = await withCpu(key, target.pid, () =>
      drive({
        url: target.url,
        productId: target.acceptId,
        tokens: run.tokens,
        connections: HEADLINE,
        seconds: SECONDS,
      }),
    ).finally(unprobe);
    const accepted = perSecond(result, 202);
    const cores = (cpuUse[key]?.['target'] ?? 0) + (cpuUse[key]?.['worker'] ?? 0);
    const on = target.side === 'on';
    (on ? ab.acceptOn : ab.acceptOff).push(accepted);
    (on ? ab.acceptCpuOn : ab.acceptCpuOff).push(Math.round((cores / Math.max(1, accepted)) * 1e6));
    say(
      `admission ${target.side}, accept, round ${round}: ${describe(result)}; cores ${JSON.stringify(cpuUse[key])}`,
    );
  }
};

const admissionPhase = async (run: Run, kafka: BenchBroker): Promise<AdmissionAB> => {
  const on = await freshService(run, kafka, 'on', ADMISSION_ON);
  const off = await freshService(run, kafka, 'off', ADMISSION_OFF);
  try {
    const sides = [await prepareSide(run, 'on', on), await prepareSide(run, 'off', off)];
    const ab: AdmissionAB = {
      on: {},
      off: {},
      acceptOn: [],
      acceptOff: [],
      acceptCpuOn: [],
      acceptCpuOff: [],
    };
    for (let round = 1; round <= ADMISSION_ROUNDS; round += 1)
      // which side goes first changes every round: neither always meets the machine the other left behind
      await abRound(run, round, round % 2 === 1 ? sides : [...sides].reverse(), ab);
    return ab;
  } finally {
    await Promise.all([on.service.stop(), off.service.stop()]);
  }
};

/**
 * The worker's commit consumer on a backlog, through Kafka: the worker is paused (SIGSTOP) while a load at the
 * headline connection count reserves orders for BACKLOG_SECONDS, then resumed, and the time until MySQL has
 * decided all of them is taken. (After the accept phase little is left, since the worker keeps up; that
 * drain says nothing about how fast it can go.)
 */
const backlogPhase = async (
  base: string,
  run: Run,
  db: string,
  target: Readonly<{ productId: number; workerPid: number }>,
) => {
  process.kill(target.workerPid, 'SIGSTOP');
  let load: LoadResult;
  try {
    load = await drive({
      url: base,
      productId: target.productId,
      tokens: run.tokens,
      connections: HEADLINE,
      seconds: BACKLOG_SECONDS,
    });
  } finally {
    process.kill(target.workerPid, 'SIGCONT');
  }
  const drained = await withCpu('backlog drain', target.workerPid, () => drain(base, run, db));
  say(
    `backlog: ${load.statuses['202'] ?? 0} reserved with the worker paused; then ${JSON.stringify(drained)}; ` +
      `cores ${JSON.stringify(cpuUse['backlog drain'])}`,
  );
  return { reserved: load.statuses['202'] ?? 0, drained };
};

type Drained = Awaited<ReturnType<typeof drain>>;

/** In two processes, the commit consumer's speed on a real backlog; in one, on what the accept phase left. */
const commitFigures = (afterAccept: Drained, backlog: Readonly<{ drained: Drained }> | null) => {
  const timed = backlog?.drained ?? afterAccept;
  return {
    serviceCommitPerSec: timed.serviceCommitPerSec,
    commitBacklog: {
      orders: timed.backlogAfterAccept,
      seconds: timed.drainSeconds,
      paused: backlog !== null,
    },
  };
};

/** Oversold and audit over every drain of the run. */
const booksAfter = (drains: ReadonlyArray<Drained | undefined>) => {
  const all = drains.filter((d): d is Drained => d !== undefined);
  return {
    oversold: Math.max(...all.map((d) => d.oversold)),
    auditOk: all.every((d) => d.auditOk),
    auditViolations: all.flatMap((d) => d.auditViolations),
  };
};

const mergeLogs = (a: LogSummary, b: LogSummary): LogSummary => {
  const messages: Record<string, number> = { ...a.messages };
  for (const [msg, n] of Object.entries(b.messages)) messages[msg] = (messages[msg] ?? 0) + n;
  return { warnings: a.warnings + b.warnings, errors: a.errors + b.errors, messages };
};

const consumerPhase = async (run: Run) => {
  const go = async (label: string, merge: boolean, options: ConsumerOptions) => {
    const name = `seckill_bench_${run.id}_consumer_${label}`;
    onCleanup(`drop database ${name}`, () => dropDatabase(run.admin, name));
    const round = label.startsWith('warm') ? '(warm-up)' : `#${label.slice(-1)}`;
    const key = `consumer ${merge ? 'merged' : 'one-by-one'} ${round}`;
    const result = await consumerRun(name, merge, options, run.admin, (drain) =>
      withCpu(key, undefined, drain),
    );
    await dropDatabase(run.admin, name);
    say(`consumer ${label}: ${JSON.stringify(result)}; cores ${JSON.stringify(cpuUse[key])}`);
    // CPU per committed order: this process (the use case, MikroORM, mysql2) and MariaDB
    const perOrder = (name: string) => ((cpuUse[key]?.[name] ?? 0) * result.seconds * 1e6) / result.committed;
    return { ...result, nodeMicros: perOrder('bench'), mariadbMicros: perOrder('mariadb') };
  };
  // warm-up of both paths (JIT, pools), on a small backlog each
  const small = { ...CONSUMER, orders: 2 * CONSUMER.batch };
  await go('warm_merged', true, small);
  await go('warm_onebyone', false, small);
  // A B B A: whatever drifts over the phase (MariaDB's background flushing, other work) hits both modes alike
  const rounds = [
    await go('onebyone_1', false, CONSUMER),
    await go('merged_1', true, CONSUMER),
    await go('merged_2', true, CONSUMER),
    await go('onebyone_2', false, CONSUMER),
  ];
  const mode = (merge: boolean) => {
    const mine = rounds.filter((r) => r.mergeDecrements === merge);
    const committed = mine.reduce((n, r) => n + r.committed, 0);
    const seconds = mine.reduce((n, r) => n + r.seconds, 0);
    const mean = (pick: (r: (typeof mine)[number]) => number) =>
      mine.reduce((n, r) => n + pick(r), 0) / mine.length;
    return {
      perSec: Math.round(committed / seconds),
      statementsPerOrder: Number(mean((r) => r.statementsPerOrder).toFixed(2)),
      rounds: mine.map((r) => r.perSec),
      cpuMicrosPerOrder: {
        node: Math.round(mean((r) => r.nodeMicros)),
        mariadb: Math.round(mean((r) => r.mariadbMicros)),
      },
    };
  };
  return { merged: mode(true), oneByOne: mode(false) };
};

// ---- scaled out: one API replica against two, behind HAProxy ----

/** How many times the scale-out A/B alternates its two deployments. */
const SCALEOUT_ROUNDS = Number(env('BENCH_SCALEOUT_ROUNDS', '3'));
/** worker processes on each side */
const SCALEOUT_WORKERS = 2;

type ScaleSide = Readonly<{
  apis: number;
  mysql: 'mariadb' | 'galera';
  label: string;
  /** a connection to its MySQL server, for the counts of its database */
  admin: Connection;
  deployment: Deployment;
  db: string;
  floodId: number;
  acceptId: number;
  probes: readonly Probe[];
  samples: ScaleOutSamples;
  /** its processes' logs and the balancer's configuration (removed once the phase has succeeded) */
  dir: string;
  stop: () => Promise<void>;
}>;

/**
 * One side of the scale-out A/B: a deployment with `apis` API replicas and two workers on a database of its own
 * (dropped at cleanup), a Redis Cluster of its own, and topics and consumer groups of its own on the bench's
 * Kafka cluster, with the settings of the bench's main service (admission control on); its flood product sold
 * out and decided, its accept product listed and warmed up.
 */
const scaleOutSide = async (
  run: Run,
  kafka: BenchBroker & Readonly<{ cluster: NonNullable<BenchBroker['cluster']> }>,
  apis: number,
  galera: GaleraCluster | null = null,
): Promise<ScaleSide> => {
  const label = `${apis === 1 ? '1 API' : `${apis} APIs`}${galera ? ', Galera' : ''}`;
  const tag = `scale${apis}${galera ? 'g' : ''}`;
  const db = `seckill_bench_${run.id}_${tag}`;
  const dir = `${ROOT}.cache/bench/scaleout-${run.id}-${tag}`;
  const admin = galera ? await createConnection({ uri: galera.url }) : run.admin;
  if (galera) onCleanup(`close the connection to Galera for ${label}`, () => admin.end());
  onCleanup(`drop database ${db}`, () => dropDatabase(admin, db));
  const settings = deploymentSettings(
    serviceEnv({
      secret: SECRET,
      mysqlUrl: databaseUrl(db),
      namespace: `bench-${run.id}-${tag}:`,
      brokers: kafka.brokers,
      admission: ADMISSION_ON,
      extra: { ...kafka.env, SECKILL_KAFKA_NAMESPACE: `bench-${run.id}-${tag}`, ...TRIED },
    }),
  );
  const deployment = await startDeployment({
    apis,
    workers: SCALEOUT_WORKERS,
    kafka: kafka.cluster,
    mysql: galera ? { galera, database: db } : { url: databaseUrl(db) },
    secret: SECRET,
    settings,
    dir,
    say: (line) => say(`scale-out, ${label}: ${line}`),
  });
  let stopped: Promise<void> | null = null;
  const stop = () => (stopped ??= deployment.stop());
  onCleanup(`stop the scale-out deployment with ${label}`, stop);
  const url = deployment.url;
  say(`scale-out, ${label}: ${url} (HAProxy), pids ${JSON.stringify(deployment.pids())}`);
  const floodId = await listProduct(url, run.adminToken, `bench flood, ${label}`, FLOOD_STOCK, 1);
  const acceptId = await listProduct(
    url,
    run.adminToken,
    `bench accept, ${label}`,
    ACCEPT_STOCK,
    PER_USER_LIMIT,
  );
  await sellOut(url, floodId, run);
  while ((await undecidedRows(admin, db)) > 0) await sleep(100);
  await drive({
    url,
    productId: acceptId,
    tokens: run.tokens,
    connections: CONNECTIONS[0] ?? 50,
    seconds: WARMUP_SECONDS,
  });
  const probes = deploymentProbes(deployment);
  const mysql = galera ? ('galera' as const) : ('mariadb' as const);
  return {
    apis,
    mysql,
    label,
    admin,
    deployment,
    db,
    floodId,
    acceptId,
    probes,
    samples: noSamples(),
    dir,
    stop,
  };
};

/** One round of the scale-out A/B: the flood on each side in turn, then the accept load on each. */
const scaleOutRound = async (run: Run, round: number, inTurn: readonly ScaleSide[]): Promise<void> => {
  for (const side of inTurn) {
    const key = `scale-out ${side.label} flood`;
    const load = { url: side.deployment.url, tokens: run.tokens, connections: HEADLINE, seconds: SECONDS };
    const result = await withCpu(
      key,
      undefined,
      () => drive({ ...load, productId: side.floodId }),
      side.probes,
    );
    side.samples.floodRps.push(result.rps);
    side.samples.floodP99Ms.push(result.p99Ms);
    side.samples.balancerMicrosPerAnswer.push(
      Math.round(((cpuUse[key]?.['haproxy'] ?? 0) / Math.max(1, result.rps)) * 1e6),
    );
    say(
      `scale-out, ${side.label}, flood, round ${round}: ${describe(result)}; cores ${JSON.stringify(cpuUse[key])}`,
    );
  }
  for (const side of inTurn) {
    const key = `scale-out ${side.label} accept`;
    const load = { url: side.deployment.url, tokens: run.tokens, connections: HEADLINE, seconds: SECONDS };
    const decidedBefore = await decidedRows(side.admin, side.db, side.acceptId);
    const startedAt = Date.now();
    const result = await withCpu(
      key,
      undefined,
      () => drive({ ...load, productId: side.acceptId }),
      side.probes,
    );
    const decided = (await decidedRows(side.admin, side.db, side.acceptId)) - decidedBefore;
    side.samples.commitRps.push(Math.round(decided / ((Date.now() - startedAt) / 1000)));
    const accepted = perSecond(result, 202);
    const cores = (cpuUse[key]?.['target'] ?? 0) + (cpuUse[key]?.['worker'] ?? 0);
    side.samples.acceptRps.push(accepted);
    side.samples.acceptP99Ms.push(result.p99Ms);
    side.samples.acceptCpuMicros.push(Math.round((cores / Math.max(1, accepted)) * 1e6));
    say(
      `scale-out, ${side.label}, accept, round ${round}: ${describe(result)}; cores ${JSON.stringify(cpuUse[key])}`,
    );
  }
};

const ratioOf = (a: number, b: number) => Number((a / (b || 1)).toFixed(3));

/** The phase's figures from its sides' (1 API, 2 APIs, and 2 on Galera when it ran). */
const scaleOutOf = (haproxy: string, decided: readonly ScaleOutSide[]): ScaleOutResult => {
  const [one, two, onGalera] = decided as [ScaleOutSide, ScaleOutSide, ScaleOutSide | undefined];
  return {
    rounds: SCALEOUT_ROUNDS,
    connections: HEADLINE,
    secondsPerLoad: SECONDS,
    workers: SCALEOUT_WORKERS,
    admission: 'on',
    balancer: haproxy,
    redis: '3 masters, 1 replica each',
    one,
    two,
    floodRatio: ratioOf(two.floodRps, one.floodRps),
    acceptRatio: ratioOf(two.acceptRps, one.acceptRps),
    galera: onGalera ?? { skipped: GALERA_MISSING },
    ...(onGalera
      ? {
          galeraRatios: {
            flood: ratioOf(onGalera.floodRps, two.floodRps),
            accept: ratioOf(onGalera.acceptRps, two.acceptRps),
            commit: ratioOf(onGalera.commitRps ?? 0, two.commitRps ?? 0),
          },
        }
      : {}),
  };
};

const GALERA_MISSING = 'MariaDB Galera is not installed (apt-get install galera-4 rsync)';

/** The Galera cluster of the third side, or null (said loudly) where galera-4 is not installed. */
const startGalera = async (): Promise<GaleraCluster | null> => {
  try {
    await access('/usr/lib/galera/libgalera_smm.so');
  } catch {
    say(`!!! scale-out: the Galera side is skipped: ${GALERA_MISSING}`);
    return null;
  }
  const galera = await GaleraCluster.start({ say: (line) => say(`scale-out, Galera: ${line}`) });
  onCleanup('stop the Galera cluster', () => galera.stop());
  return galera;
};

/**
 * Scaled out: three deployments side by side, one API replica and two on the machine's MariaDB, and two again
 * on a Galera cluster of 3 behind a single-writer HAProxy, each with two workers and a Redis Cluster of 3
 * masters with a replica each, all behind HAProxy; the sold-out flood and the accept load at the headline count
 * through the balancer, the sides taking turns at going first, SCALEOUT_ROUNDS times; then each side's pipeline
 * drained and audited. Skipped, loudly, where it cannot run (the mock broker, no HAProxy; the Galera side alone
 * where galera-4 is missing).
 */
const scaleOutPhase = async (run: Run, kafka: BenchBroker): Promise<ScaleOutResult> => {
  const { cluster } = kafka;
  const { blocker, haproxy } = await scaleOutBlocker(cluster);
  if (blocker !== null || cluster === null) {
    say(`!!! SCALE-OUT PHASE SKIPPED: ${blocker ?? 'no Kafka cluster'}`);
    return { skipped: blocker ?? 'no Kafka cluster' };
  }
  say(
    `scale-out: 1 API replica against 2, and 2 on a Galera cluster, ${SCALEOUT_WORKERS} workers each, behind ${haproxy}`,
  );
  const sides: ScaleSide[] = [];
  let galera: GaleraCluster | null = null;
  let done = false;
  try {
    for (const apis of [1, 2]) sides.push(await scaleOutSide(run, { ...kafka, cluster }, apis));
    galera = await startGalera();
    if (galera) sides.push(await scaleOutSide(run, { ...kafka, cluster }, 2, galera));
    for (let round = 1; round <= SCALEOUT_ROUNDS; round += 1)
      // which side goes first changes every round, as in the admission A/B
      await scaleOutRound(run, round, round % 2 === 1 ? sides : [...sides].reverse());
    const decided: ScaleOutSide[] = [];
    for (const side of sides) {
      const drained = await drain(side.deployment.url, run, side.db, side.admin);
      say(`scale-out, ${side.label}: drained ${JSON.stringify(drained)}`);
      // not decided within the drain's timeout counts as a failed audit
      const books = { oversold: drained.oversold, auditOk: drained.drained && drained.auditOk };
      decided.push(sideOf(side.apis, side.mysql, side.samples, books));
    }
    done = true;
    return scaleOutOf(haproxy, decided);
  } finally {
    await Promise.all(sides.map((side) => side.stop()));
    await galera?.stop();
    // the deployments' logs are kept when the phase failed
    if (done) await Promise.all(sides.map((side) => rm(side.dir, { recursive: true, force: true })));
    else say(`scale-out: the deployments' logs are in ${ROOT}.cache/bench/`);
  }
};

// ---- machine facts ----

/** Server versions, and the process ids of MariaDB and Redis (for the CPU figures). */
const serverFacts = async (admin: Connection) => {
  const [rows] = await admin.query<RowDataPacket[]>('SELECT VERSION() AS v, @@pid_file AS f');
  const mariadb = String(rows[0]?.['v'] ?? 'unknown');
  const pidFile = String(rows[0]?.['f'] ?? '');
  const mariadbPid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined;
  const redis = connectRedis({ url: REDIS_URL });
  try {
    const info = await redis.info('server');
    const redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]) || undefined;
    return { mariadb, redis: /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown', mariadbPid, redisPid };
  } finally {
    await redis.quit();
  }
};

const load1 = () => Number((loadavg()[0] ?? 0).toFixed(2));

// ---- the run ----

type Facts = Awaited<ReturnType<typeof serverFacts>>;

/** What every part of the run needs: the buyers' tokens, the admin connection, the Kafka cluster, the servers' facts. */
type Setup = Readonly<{
  startedAt: string;
  loadAverageStart: number;
  run: Run;
  signer: JwtTokens;
  kafka: BenchBroker;
  facts: Facts;
}>;

const setUp = async (): Promise<Setup> => {
  const startedAt = new Date().toISOString();
  const loadAverageStart = load1();
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const admin = await openAdmin();
  onCleanup('close the admin connection', () => admin.end());
  const signer = new JwtTokens(SECRET);
  const tokens = await Promise.all(
    Array.from({ length: BUYERS }, (_, i) => signer.sign({ userId: `bench-${id}-${i}`, role: 'user' }, 3600)),
  );
  const run: Run = {
    id,
    admin,
    tokens,
    adminToken: await signer.sign({ userId: 'bench-admin', role: 'admin' }, 3600),
  };
  say(
    `run ${id}: ${BUYERS} buyer tokens signed; ${CONNECTIONS.join(' and ')} connections, ${SECONDS} s per load`,
  );

  const kafka = await startBenchBroker(say, MOCK_KAFKA, KAFKA_BROKERS);
  onCleanup('stop the Kafka cluster', kafka.stop);
  const facts = await serverFacts(admin);
  sharedProbes.push(
    { name: 'mariadb', pid: facts.mariadbPid },
    { name: 'redis', pid: facts.redisPid },
    ...kafka.pids.map((pid) => ({ name: 'kafka', pid })),
  );
  say(`Kafka: ${kafka.description}`);
  return { startedAt, loadAverageStart, run, signer, kafka, facts };
};

const machineOf = (facts: Facts, loadAverageStart: number): Figures['machine'] => ({
  cores: cpus().length,
  cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  memoryMb: Math.round(totalmem() / 2 ** 20),
  mariadb: facts.mariadb,
  redis: facts.redis,
  loadAverageStart,
  loadAverageEnd: load1(),
});

/** Every phase (BENCH_PHASES main), and the scale-out phase too unless left out. */
const fullRun = async ({
  startedAt,
  loadAverageStart,
  run,
  signer,
  kafka,
  facts,
}: Setup): Promise<Figures> => {
  const { id, admin } = run;
  const naiveDb = `seckill_bench_${id}_naive`;
  onCleanup(`drop database ${naiveDb}`, () => dropDatabase(admin, naiveDb));
  await createDatabase(admin, naiveDb);
  const [naiveProduct, hotRowProduct] = await createNaiveProducts(admin, naiveDb, [NAIVE_STOCK, NAIVE_STOCK]);

  const bareProcess = await bareExpress(run);
  const naiveEnv = { NAIVE_MYSQL_URL: databaseUrl(naiveDb) };
  const naive = await baseline(
    { key: 'naiveDb', label: 'naive DB', script: NAIVE, env: naiveEnv },
    run,
    naiveProduct!,
  );
  const real = await realService(run, kafka, bareProcess);
  const bare = bareProcess.results;
  const admission = await admissionPhase(run, kafka);

  // tokens of buyers the service never saw: fresh for the verifier here too
  const jwt = await jwtCost(
    SECRET,
    await Promise.all(
      Array.from({ length: 4_000 }, (_, i) => signer.sign({ userId: `jwt-${id}-${i}`, role: 'user' })),
    ),
  );
  say(`token check: ${JSON.stringify(jwt)}`);
  say(`hot row: ${HOT_ROW.connections} connections × ${HOT_ROW.seconds} s on one row…`);
  const hotRow = await withCpu('hot row', undefined, () =>
    hotRowCeiling(databaseUrl(naiveDb), hotRowProduct!, HOT_ROW.connections, HOT_ROW.seconds),
  );
  say(`hot row: ${JSON.stringify(hotRow)}`);
  const consumer = await consumerPhase(run);
  const scaleOut: ScaleOutResult = PHASES.has('scaleout')
    ? await scaleOutPhase(run, kafka)
    : { skipped: 'left out of the run (BENCH_PHASES)' };

  const loads: Record<Phase, Record<string, LoadResult>> = {
    bareExpress: bare,
    naiveDb: naive,
    flood: real.flood,
    accept: real.accept,
  };
  const floodRps = byConnections(real.flood, (r) => r.rps);
  const bareExpressRps = byConnections(bare, (r) => r.rps);
  /** the API's (or the baseline's) cores per answer in a load, µs; per accepted order in the accept loads */
  const apiMicros = (key: string, results: Record<string, LoadResult>, accepted: boolean) =>
    byConnections(results, (r) => {
      const perSec = accepted ? perSecond(r, 202) : r.rps;
      return Math.round(((cpuUse[`${key} @${r.connections}`]?.['target'] ?? 0) / Math.max(1, perSec)) * 1e6);
    });
  const apiCpuMicrosPerAnswer = {
    bareExpress: apiMicros('bareExpress', bare, false),
    flood: apiMicros('flood', real.flood, false),
    keyedFlood: apiMicros('keyedFlood', real.keyedFlood, false),
    accept: apiMicros('accept', real.accept, true),
    keyedAccept: apiMicros('keyedAccept', real.keyedAccept, true),
  };
  const headline = real.flood[HEADLINE]!;
  const finishedAt = new Date().toISOString();
  const body: Omit<Figures, 'targets' | keyof Ratios> = {
    ...runFacts({ startedAt, loadAverageStart, kafka, facts }, finishedAt),
    settings: {
      ...loadSettings,
      consumerBacklog: CONSUMER.orders,
      consumerBatch: CONSUMER.batch,
      consumerProducts: CONSUMER.products,
      consumerConcurrency: CONSUMER.concurrency,
      hotRowSeconds: HOT_ROW.seconds,
      burstOrders: BURST.orders,
      burstConcurrency: BURST.concurrency,
      deployment: SPLIT ? 'seckill serve + seckill worker (two processes)' : 'seckill all (one process)',
    },
    connections: CONNECTIONS,
    headlineConnections: HEADLINE,
    bareExpressRps,
    headlineRounds: { rounds: ROUNDS, perSecond: real.rounds },
    floodRps,
    keyed: {
      floodRps: byConnections(real.keyedFlood, (r) => r.rps),
      acceptRps: byConnections(real.keyedAccept, (r) => perSecond(r, 202)),
      latencyMs: {
        flood: byConnections(real.keyedFlood, latencyOf),
        accept: byConnections(real.keyedAccept, latencyOf),
      },
    },
    apiCpuMicrosPerAnswer,
    floodRatio: Object.fromEntries(
      CONNECTIONS.map((c) => [c, Number(((floodRps[c] ?? 0) / (bareExpressRps[c] || 1)).toFixed(3))]),
    ),
    admission: {
      rounds: ADMISSION_ROUNDS,
      floodRpsOn: admission.on,
      floodRpsOff: admission.off,
      acceptRpsOn: admission.acceptOn,
      acceptRpsOff: admission.acceptOff,
      acceptCpuMicrosOn: admission.acceptCpuOn,
      acceptCpuMicrosOff: admission.acceptCpuOff,
      acceptKept: Number((median(admission.acceptOn) / (median(admission.acceptOff) || 1)).toFixed(3)),
      floodRatioWithout: Object.fromEntries(
        CONNECTIONS.map((c) => [
          c,
          Number((median(admission.off[c] ?? [0]) / (bareExpressRps[c] || 1)).toFixed(3)),
        ]),
      ),
      floodKept: Object.fromEntries(
        CONNECTIONS.map((c) => [
          c,
          Number((median(admission.on[c] ?? [0]) / (median(admission.off[c] ?? [0]) || 1)).toFixed(3)),
        ]),
      ),
    },
    scaleOut,
    floodSoldOutShare: byConnections(real.flood, (r) =>
      Number(((r.statuses['409'] ?? 0) / Math.max(1, r.answered)).toFixed(4)),
    ),
    acceptRps: byConnections(real.accept, (r) => perSecond(r, 202)),
    naiveDbRps: byConnections(naive, (r) => r.rps),
    p50Ms: headline.p50Ms,
    p99Ms: headline.p99Ms,
    latencyMs: byPhase(loads, latencyOf),
    // the service's worker (committing what the API accepted) counts as the server too
    targetCpuMicrosPerAnswer: {
      ...byPhase(loads, (r, key) =>
        Math.round(
          (((cpuUse[key]?.['target'] ?? 0) + (cpuUse[key]?.['worker'] ?? 0)) / Math.max(1, r.rps)) * 1e6,
        ),
      ),
    },
    jwtVerifyMicros: jwt.jwtVerifyMicros,
    jwtRepeatVerifyMicros: jwt.jwtRepeatVerifyMicros,
    hmacVerifyMicros: jwt.hmacVerifyMicros,
    otherCoresMean: otherCoresMean(),
    answers: {
      bareExpress: byConnections(bare, statusesOf),
      naiveDb: byConnections(naive, statusesOf),
      flood: byConnections(real.flood, statusesOf),
      accept: byConnections(real.accept, statusesOf),
      keyedFlood: byConnections(real.keyedFlood, statusesOf),
      keyedAccept: byConnections(real.keyedAccept, statusesOf),
    },
    hotRowUpdatesPerSec: hotRow.perSec,
    hotRowConnections: hotRow.connections,
    consumerMergedPerSec: consumer.merged.perSec,
    consumerOneByOnePerSec: consumer.oneByOne.perSec,
    mergeSpeedup: Number((consumer.merged.perSec / consumer.oneByOne.perSec).toFixed(2)),
    consumerStatementsPerOrder: {
      merged: consumer.merged.statementsPerOrder,
      oneByOne: consumer.oneByOne.statementsPerOrder,
    },
    consumerRounds: { merged: consumer.merged.rounds, oneByOne: consumer.oneByOne.rounds },
    consumerCpuMicrosPerOrder: {
      merged: consumer.merged.cpuMicrosPerOrder,
      oneByOne: consumer.oneByOne.cpuMicrosPerOrder,
    },
    backlogAfterAccept: real.backlogAfterAccept,
    serviceCommitPerSec: real.serviceCommitPerSec,
    commitBacklog: real.commitBacklog,
    commitDuringAcceptPerSec: real.commitDuringAcceptPerSec,
    batching: real.batching,
    burst: real.burst,
    memory: real.memory,
    serviceLog: real.serviceLog,
    accepted: real.accepted,
    drained: real.drained,
    drainSeconds: real.drainSeconds,
    oversold: real.oversold,
    auditOk: real.auditOk,
    auditViolations: real.auditViolations,
    cpuCores: cpuUse,
    cpuOthers,
  };
  const figures = { ...body, ...ratiosOf(body) };
  return { ...figures, targets: targetsOf(figures) };
};

/** The settings of the loads, the same in a full run and in the scale-out phase alone. */
const loadSettings = {
  secondsPerLoad: SECONDS,
  warmUpSeconds: WARMUP_SECONDS,
  buyers: BUYERS,
  floodStock: FLOOD_STOCK,
  acceptStock: ACCEPT_STOCK,
  perUserLimit: PER_USER_LIMIT,
};

/** When the run was, how long it took, and on what machine and broker. */
const runFacts = (
  setup: Pick<Setup, 'startedAt' | 'loadAverageStart' | 'kafka' | 'facts'>,
  finishedAt: string,
) => ({
  startedAt: setup.startedAt,
  finishedAt,
  runtimeSeconds: Math.round((Date.now() - started) / 1000),
  machine: machineOf(setup.facts, setup.loadAverageStart),
  broker: setup.kafka.facts,
});

/** The scale-out phase alone (BENCH_PHASES=scaleout). */
const scaleOutAlone = async ({
  startedAt,
  loadAverageStart,
  run,
  kafka,
  facts,
}: Setup): Promise<ScaleOutRun> => {
  const scaleOut = await scaleOutPhase(run, kafka);
  return {
    ...runFacts({ startedAt, loadAverageStart, kafka, facts }, new Date().toISOString()),
    settings: loadSettings,
    scaleOut,
    cpuCores: cpuUse,
    cpuOthers,
  };
};

type Outcome = Readonly<{ full: Figures } | { scaleOut: ScaleOutRun }>;

const main = async (): Promise<Outcome> => {
  const setup = await setUp();
  return PHASES.has('main') ? { full: await fullRun(setup) } : { scaleOut: await scaleOutAlone(setup) };
};

/** A run of the scale-out phase alone: its own file, the page left alone. */
const publishScaleOut = async (result: ScaleOutRun) => {
  await mkdir(`${ROOT}bench/results`, { recursive: true });
  await writeFile(`${ROOT}bench/results/latest-scaleout.json`, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(renderScaleOutRun(result));
  say('wrote bench/results/latest-scaleout.json (docs/benchmarks.md shows the full run)');
  // the only phase asked for did not run: not a success
  if ('skipped' in result.scaleOut) process.exitCode = 1;
};

const publish = async (figures: Figures) => {
  await mkdir(`${ROOT}bench/results`, { recursive: true });
  if (!SPLIT || TRYING || MOCK_KAFKA || KAFKA_BROKERS !== 3) {
    // another deployment's figures, other settings', or another broker's, kept beside the page's (the default run's)
    const name = TRYING
      ? 'latest-tried.json'
      : MOCK_KAFKA
        ? 'latest-mock.json'
        : KAFKA_BROKERS !== 3
          ? 'latest-one-broker.json'
          : 'latest-all.json';
    await writeFile(`${ROOT}bench/results/${name}`, `${JSON.stringify(figures, null, 2)}\n`);
    process.stdout.write(renderText(figures));
    say(`wrote bench/results/${name} (docs/benchmarks.md shows the default run)`);
    return;
  }
  await writeFile(`${ROOT}bench/results/latest.json`, `${JSON.stringify(figures, null, 2)}\n`);
  await writeChart(figures, `${ROOT}docs/benchmarks.svg`);
  const before = await readFile(`${ROOT}bench/results/before-group-commit.json`, 'utf8')
    .then((text) => JSON.parse(text) as Earlier)
    .catch(() => undefined);
  const updated = await updateDoc(`${ROOT}docs/benchmarks.md`, figures, before);
  process.stdout.write(renderText(figures));
  say(
    `wrote bench/results/latest.json, docs/benchmarks.svg${updated ? ' and the results block of docs/benchmarks.md' : ' (docs/benchmarks.md has no results markers: left alone)'}`,
  );
};

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });

try {
  const outcome = await main();
  await cleanUp();
  await ('full' in outcome ? publish(outcome.full) : publishScaleOut(outcome.scaleOut));
  say(`done in ${Math.round((Date.now() - started) / 1000)} s`);
} catch (error) {
  say(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp();
  process.exitCode = 1;
}
